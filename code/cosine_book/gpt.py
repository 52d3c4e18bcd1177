"""A small GPT-style transformer on characters of Shakespeare (chapter 1).

Su met the local/global cosine gap on a 7B LLaMA, "hundreds of vectors of different
dimensions". Chapter 1 studies it on a model of the same design that trains in
seconds on a laptop CPU: a decoder-only transformer with token and position
embeddings, pre-norm blocks of causal self-attention and an MLP, a final norm and an
output head. With the default :class:`GPTConfig` it has 30 parameter tensors, from
the head's 65 biases to the MLP's 65,536-entry matrices (three orders of magnitude).

The corpus is "Tiny Shakespeare" (:func:`cosine_book.datasets.load_tiny_shakespeare`),
read character by character (:class:`CharCorpus`): the first 90 % for training, the
rest held out.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn
from torch.nn import functional as F

from cosine_book._validation import as_int_scalar

__all__ = ["GPT", "CharCorpus", "GPTConfig", "parameter_table"]


class CharCorpus:
    """A text as integer character codes, split into training and held-out parts.

    Parameters
    ----------
    text : str
        The corpus; its distinct characters, sorted, are the vocabulary.
    held_out : float
        Share of the text, at its end, kept for held-out estimates (0 < share < 1).

    Examples
    --------
    >>> corpus = CharCorpus("abcabcabcabc", held_out=0.25)
    >>> corpus.vocabulary, corpus.train.tolist()[:4], len(corpus.held)
    ('abc', [0, 1, 2, 0], 3)
    >>> corpus.decode(corpus.train[:5])
    'abcab'
    """

    def __init__(self, text: str, held_out: float = 0.1) -> None:
        if not isinstance(text, str) or len(text) < 4:
            raise ValueError("text must be a string of at least 4 characters")
        if not 0.0 < held_out < 1.0:
            raise ValueError(f"held_out must lie strictly between 0 and 1; got {held_out!r}")
        self.vocabulary = "".join(sorted(set(text)))
        index = {character: code for code, character in enumerate(self.vocabulary)}
        codes = torch.tensor([index[character] for character in text], dtype=torch.long)
        split = round(len(text) * (1.0 - held_out))
        self.train, self.held = codes[:split], codes[split:]

    def decode(self, codes: torch.Tensor) -> str:
        """The characters of a 1-D tensor of codes."""
        return "".join(self.vocabulary[int(code)] for code in codes)

    def batch(
        self, size: int, context: int, generator: torch.Generator, *, held: bool = False
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """``size`` random windows of ``context`` characters and the characters that follow.

        The window starts come from ``generator`` (integer draws only, the same on
        every CPU). Returns inputs and targets, both of shape ``(size, context)``.
        """
        codes = self.held if held else self.train
        size = as_int_scalar(size, "size", minimum=1)
        context = as_int_scalar(context, "context", minimum=1, maximum=len(codes) - 1)
        starts = torch.randint(len(codes) - context, (size,), generator=generator)
        offsets = torch.arange(context)
        windows = starts[:, None] + offsets
        return codes[windows], codes[windows + 1]


@dataclass(frozen=True)
class GPTConfig:
    """Sizes of a :class:`GPT` (the defaults are chapter 1's model).

    Attributes
    ----------
    vocabulary : int
        Number of distinct tokens (65 characters in Tiny Shakespeare).
    context : int
        Longest input, in tokens.
    width : int
        Width of the residual stream (embedding size).
    heads : int
        Attention heads per block; divides ``width``.
    blocks : int
        Transformer blocks.
    """

    vocabulary: int = 65
    context: int = 64
    width: int = 128
    heads: int = 4
    blocks: int = 2

    def __post_init__(self) -> None:
        for name in ("vocabulary", "context", "width", "heads", "blocks"):
            as_int_scalar(getattr(self, name), name, minimum=1)
        if self.width % self.heads:
            raise ValueError(f"heads ({self.heads}) must divide width ({self.width})")


class _Block(nn.Module):
    """Pre-norm transformer block: x + attention(norm(x)), then x + MLP(norm(x))."""

    def __init__(self, config: GPTConfig) -> None:
        super().__init__()
        self.heads = config.heads
        self.attention_norm = nn.LayerNorm(config.width)
        self.qkv = nn.Linear(config.width, 3 * config.width)
        self.attention_out = nn.Linear(config.width, config.width)
        self.mlp_norm = nn.LayerNorm(config.width)
        self.mlp_in = nn.Linear(config.width, 4 * config.width)
        self.mlp_out = nn.Linear(4 * config.width, config.width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, length, width = x.shape
        q, k, v = self.qkv(self.attention_norm(x)).split(width, dim=2)
        q, k, v = (t.view(batch, length, self.heads, -1).transpose(1, 2) for t in (q, k, v))
        attended = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.attention_out(attended.transpose(1, 2).reshape(batch, length, width))
        return x + self.mlp_out(F.gelu(self.mlp_in(self.mlp_norm(x))))


class GPT(nn.Module):
    r"""A decoder-only transformer: embeddings, ``blocks`` blocks, final norm, head.

    Parameters
    ----------
    config : GPTConfig
    seed : int
        Seed of the initial weights (normal with standard deviation 0.02, the
        output projections scaled by :math:`1/\sqrt{2 \cdot \text{blocks}}` as in
        GPT-2; biases zero, norm gains one).

    Examples
    --------
    >>> model = GPT(GPTConfig(), seed=0)
    >>> table = parameter_table(model)
    >>> len(table), min(table.values()), max(table.values())
    (30, 65, 65536)
    >>> codes = torch.zeros((2, 8), dtype=torch.long)
    >>> model(codes).shape
    torch.Size([2, 8, 65])
    """

    def __init__(self, config: GPTConfig | None = None, seed: int = 0) -> None:
        super().__init__()
        self.config = config = config or GPTConfig()
        seed = as_int_scalar(seed, "seed", minimum=0)
        self.token_embedding = nn.Embedding(config.vocabulary, config.width)
        self.position_embedding = nn.Embedding(config.context, config.width)
        self.blocks = nn.ModuleList(_Block(config) for _ in range(config.blocks))
        self.final_norm = nn.LayerNorm(config.width)
        self.head = nn.Linear(config.width, config.vocabulary)
        generator = torch.Generator().manual_seed(seed)
        with torch.no_grad():
            for name, parameter in self.named_parameters():
                if name.endswith("bias"):
                    parameter.zero_()
                elif "norm" in name:
                    parameter.fill_(1.0)
                else:
                    std = 0.02
                    if name.endswith(("attention_out.weight", "mlp_out.weight")):
                        std /= math.sqrt(2 * config.blocks)
                    parameter.normal_(0.0, std, generator=generator)

    def forward(self, codes: torch.Tensor) -> torch.Tensor:
        """Logits of the next token at every position, shape ``(batch, length, vocabulary)``."""
        positions = torch.arange(codes.shape[1], device=codes.device)
        x = self.token_embedding(codes) + self.position_embedding(positions)
        for block in self.blocks:
            x = block(x)
        return self.head(self.final_norm(x))

    def loss(self, codes: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        """Mean cross-entropy of the next-token predictions (nats per character)."""
        logits = self(codes)
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))


def parameter_table(model: nn.Module) -> dict[str, int]:
    """Each parameter tensor's name and number of entries, in the model's order."""
    return {name: parameter.numel() for name, parameter in model.named_parameters()}

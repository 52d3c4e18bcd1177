"""Chapter 1's model: a small GPT-style transformer, and the characters it reads.

A model of the design Su studied on a 7B LLaMA that trains in seconds on a CPU: 30
parameter tensors, from the head's 65 biases to the MLP's 65,536-entry matrices. It
reads Tiny Shakespeare character by character.
"""

from __future__ import annotations

import math

import torch
from torch import nn
from torch.nn import functional as F

from cosine_book._validation import as_int_scalar

__all__ = ["GPT"]

VOCABULARY = 65  # distinct characters of Tiny Shakespeare
CONTEXT = 64  # longest input, in characters
WIDTH = 128  # width of the residual stream
HEADS = 4
BLOCKS = 2


class CharCorpus:
    """A text as character codes: the first 90 % for training, the rest held out."""

    def __init__(self, text: str) -> None:
        self.vocabulary = "".join(sorted(set(text)))
        index = {character: code for code, character in enumerate(self.vocabulary)}
        codes = torch.tensor([index[character] for character in text], dtype=torch.long)
        split = round(len(text) * 0.9)
        self.train, self.held = codes[:split], codes[split:]

    def batch(
        self, size: int, context: int, generator: torch.Generator, *, held: bool = False
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """``size`` random windows of ``context`` characters, and the characters that follow.

        The window starts are integer draws from ``generator``: the same on every CPU.
        """
        codes = self.held if held else self.train
        starts = torch.randint(len(codes) - context, (size,), generator=generator)
        windows = starts[:, None] + torch.arange(context)
        return codes[windows], codes[windows + 1]


class _Block(nn.Module):
    """Pre-norm transformer block: x + attention(norm(x)), then x + MLP(norm(x))."""

    def __init__(self) -> None:
        super().__init__()
        self.attention_norm = nn.LayerNorm(WIDTH)
        self.qkv = nn.Linear(WIDTH, 3 * WIDTH)
        self.attention_out = nn.Linear(WIDTH, WIDTH)
        self.mlp_norm = nn.LayerNorm(WIDTH)
        self.mlp_in = nn.Linear(WIDTH, 4 * WIDTH)
        self.mlp_out = nn.Linear(4 * WIDTH, WIDTH)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, length, width = x.shape
        q, k, v = self.qkv(self.attention_norm(x)).split(width, dim=2)
        q, k, v = (t.view(batch, length, HEADS, -1).transpose(1, 2) for t in (q, k, v))
        attended = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.attention_out(attended.transpose(1, 2).reshape(batch, length, width))
        return x + self.mlp_out(F.gelu(self.mlp_in(self.mlp_norm(x))))


class GPT(nn.Module):
    r"""Chapter 1's decoder-only transformer: embeddings, two blocks, final norm, head.

    Initial weights are normal with standard deviation 0.02 (the blocks' output
    projections divided by :math:`\sqrt{2 \cdot 2}`, as in GPT-2), drawn from ``seed``;
    biases are zero and norm gains one. Used in chapter 1.

    Examples
    --------
    >>> sizes = [p.numel() for p in GPT().parameters()]
    >>> len(sizes), min(sizes), max(sizes)
    (30, 65, 65536)
    >>> GPT()(torch.zeros((2, 8), dtype=torch.long)).shape
    torch.Size([2, 8, 65])
    """

    def __init__(self, seed: int = 0) -> None:
        super().__init__()
        seed = as_int_scalar(seed, "seed", minimum=0)
        self.token_embedding = nn.Embedding(VOCABULARY, WIDTH)
        self.position_embedding = nn.Embedding(CONTEXT, WIDTH)
        self.blocks = nn.ModuleList(_Block() for _ in range(BLOCKS))
        self.final_norm = nn.LayerNorm(WIDTH)
        self.head = nn.Linear(WIDTH, VOCABULARY)
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
                        std /= math.sqrt(2 * BLOCKS)
                    parameter.normal_(0.0, std, generator=generator)

    def forward(self, codes: torch.Tensor) -> torch.Tensor:
        """Logits of the next character at every position: ``(batch, length, 65)``."""
        positions = torch.arange(codes.shape[1], device=codes.device)
        x = self.token_embedding(codes) + self.position_embedding(positions)
        for block in self.blocks:
            x = block(x)
        return self.head(self.final_norm(x))

    def loss(self, codes: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        """Mean cross-entropy of the next-character predictions (nats per character)."""
        logits = self(codes)
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))

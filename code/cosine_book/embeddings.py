r"""Embedding models trained in PyTorch, and measurements on real embeddings (chapter 7).

Digit models: a ReLU layer :math:`h`, embedding :math:`e = hP`, dot or cosine logits
against class vectors (:func:`train_embedding_model`) or alignment only
(:func:`train_alignment_only`, which collapses), in float64 on one thread from
:func:`cosine_book.portable.standard_normal` draws. Pretrained embeddings (GloVe,
MiniLM): :func:`all_but_the_top`, :func:`k_occurrence` (hubness), two hand-written
question sets (:data:`QA_SET`, :data:`QA_SET_2`), :func:`answer_retrieval`,
:func:`train_query_projection` (the threshold-free pair AUC is
:func:`cosine_book.cluster_recovery.pair_auc`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Literal

import numpy as np
import torch
import torch.nn.functional as F
from numpy.typing import ArrayLike, NDArray

from cosine_book._validation import (
    as_class_labels,
    as_feature_matrix,
    as_float_scalar,
    as_int_scalar,
    as_real_array,
    as_real_matrix,
)
from cosine_book.portable import standard_normal

__all__ = [
    "OBJECTIVES",
    "QA_SET",
    "QA_SET_2",
    "EmbeddingModel",
    "all_but_the_top",
    "answer_retrieval",
    "class_logits",
    "embed",
    "hidden_features",
    "k_occurrence",
    "rescale_embedding",
    "train_alignment_only",
    "train_embedding_model",
    "train_query_projection",
]

#: Training objectives with class vectors (``"alignment"`` models have none).
OBJECTIVES: tuple[str, ...] = ("dot", "cosine")


def _rows(text: str) -> tuple[tuple[str, str, str, str], ...]:
    """One row a line, its four texts separated by " | "."""
    return tuple(tuple(row.split(" | ")) for row in text.strip().split("\n"))  # type: ignore[misc]


#: Forty rows ``(question, answer, another question on the topic, the question rewritten
#: as a statement of what it asks)``, written for the book.
QA_SET = _rows("""
How long should I boil an egg for a soft yolk? | About six minutes in boiling water gives a set white and a runny yolk. | How do I peel a hard-boiled egg without tearing it? | Boiling time for an egg with a soft yolk.
Why is the sky blue? | Air molecules scatter the short blue wavelengths of sunlight more than the red ones. | Why are sunsets red and orange? | The reason the sky looks blue.
How many bones are in the adult human body? | An adult skeleton has 206 bones, fewer than a newborn's because some fuse. | Which is the longest bone in the human body? | The number of bones in an adult human body.
Who wrote Pride and Prejudice? | Jane Austen published the novel in 1813. | When is Pride and Prejudice set? | The author of the novel Pride and Prejudice.
What is the boiling point of water at sea level? | At sea level water boils at 100 degrees Celsius, or 212 degrees Fahrenheit. | Why does pasta take longer to cook in the mountains? | The temperature at which water boils at sea level.
How do vaccines protect against disease? | They train the immune system to recognise a pathogen without causing the illness. | Who invented the first vaccine? | How vaccines give protection against disease.
What causes the tides? | Mainly the Moon's gravity, which pulls the oceans into bulges as the Earth turns. | How often is there a high tide? | The cause of ocean tides.
How do I reset a forgotten Windows password? | Use the reset link on the sign-in screen, or a reset disk made beforehand. | How do I change the desktop background in Windows? | Resetting a forgotten Windows password.
What is the capital of Australia? | Canberra, a planned city chosen as a compromise between Sydney and Melbourne. | What is the largest city in Australia? | The capital city of Australia.
How much water should an adult drink per day? | Around two to three litres, including water from food, more in heat or exercise. | Is it possible to drink too much water? | The daily amount of water an adult needs.
Why do cats purr? | Cats purr when content, but also to soothe themselves when stressed or in pain. | Why do cats knead with their paws? | The reasons cats purr.
How does compound interest work? | Interest is added to the balance, so later interest is earned on earlier interest. | What is a good interest rate for a savings account? | How compound interest grows money.
What is photosynthesis? | Plants use light energy to turn carbon dioxide and water into sugar and oxygen. | Why are plant leaves green? | The process of photosynthesis in plants.
When did the Second World War end? | In 1945: Germany surrendered in May and Japan in September. | When did the Second World War begin? | The end date of the Second World War.
How do I remove a red wine stain from a carpet? | Blot it, cover it with salt or baking soda, then rinse with cold water and soap. | How do I get rid of a bad smell in my carpet? | Removing a red wine stain from a carpet.
What is the speed of light? | About 300,000 kilometres per second in a vacuum. | Can anything travel faster than light? | The speed of light in a vacuum.
How many players are on a football team? | Eleven on the field for each side, including the goalkeeper. | How long is a professional football match? | The number of players in a football team.
Why do we have leap years? | A year lasts about 365.25 days, so an extra day every four years keeps the calendar in step with the seasons. | Which day of the week was the first of January 2000? | The reason leap years exist.
How do I make my sourdough bread rise more? | Use an active starter and give the dough a longer, warmer proof. | How do I start a sourdough starter from scratch? | Making sourdough bread rise more.
What is the tallest mountain in the world? | Mount Everest, 8,849 metres above sea level. | How long does it take to climb Mount Everest? | The tallest mountain in the world.
How does a refrigerator keep food cold? | A refrigerant absorbs heat inside as it evaporates and releases it outside as it condenses. | What temperature should a refrigerator be set to? | How a refrigerator cools its contents.
What is the difference between a virus and a bacterium? | Bacteria are living cells that reproduce on their own; viruses need a host cell. | How do antibiotics kill bacteria? | The difference between viruses and bacteria.
How do I improve my credit score? | Pay bills on time, keep card balances low and avoid opening many new accounts. | How often is a credit score updated? | Ways to raise a credit score.
Who painted the Mona Lisa? | Leonardo da Vinci, in the early sixteenth century. | Where is the Mona Lisa displayed? | The painter of the Mona Lisa.
Why do onions make you cry? | Cutting them releases a gas that irritates the eyes and triggers tears. | How do I caramelise onions? | Why cutting onions causes tears.
How long does it take to learn to play the guitar? | Basic chords take a few weeks of daily practice; fluency takes a year or more. | What size of guitar should a beginner buy? | The time needed to learn the guitar.
What is the largest planet in the solar system? | Jupiter, more than eleven times as wide as the Earth. | How many moons does Jupiter have? | The biggest planet in the solar system.
How do I stop my laptop from overheating? | Keep the vents clear, use it on a hard surface and clean the dust out of the fan. | How long should a laptop battery last? | Keeping a laptop from overheating.
What language is spoken in Brazil? | Portuguese, a legacy of colonisation by Portugal. | What is the currency of Brazil? | The language spoken in Brazil.
How many hours of sleep does a teenager need? | Eight to ten hours a night, according to sleep medicine guidelines. | Why do teenagers like to stay up late? | The amount of sleep a teenager needs.
Why does ice float on water? | Water expands when it freezes, so ice is less dense than the liquid. | At what temperature does seawater freeze? | Why ice floats on water.
How do I unclog a kitchen sink? | Pour in boiling water, then use a plunger or baking soda and vinegar. | How do I fix a dripping kitchen tap? | Unclogging a blocked kitchen sink.
Who was the first person to walk on the Moon? | Neil Armstrong, on 20 July 1969, during the Apollo 11 mission. | Why did people stop going to the Moon? | The first person to walk on the Moon.
What is inflation? | A general rise in prices that lowers what a unit of money can buy. | How does a central bank fight inflation? | What inflation means in economics.
How do bees make honey? | They collect nectar, break it down with enzymes and evaporate it in the comb. | Why are bee populations declining? | How bees produce honey.
What is the best way to learn a new language? | Daily practice with native speakers and spaced repetition of vocabulary. | Which language is hardest for English speakers to learn? | Effective ways to learn a new language.
How far is the Moon from the Earth? | About 384,000 kilometres on average. | Why do we always see the same side of the Moon? | The distance from the Earth to the Moon.
Why do leaves change colour in autumn? | Trees stop making chlorophyll, which reveals yellow pigments, and some make red ones. | Why do some trees keep their leaves in winter? | The reason leaves change colour in autumn.
How do I keep cut flowers fresh for longer? | Trim the stems at an angle, change the water daily and keep them out of the sun. | Which flowers are poisonous to cats? | Keeping cut flowers fresh.
What does DNA stand for? | Deoxyribonucleic acid, the molecule that carries genetic information. | How much DNA do humans share with chimpanzees? | The meaning of the abbreviation DNA.
""")  # noqa: E501 (one row a line)

#: Forty more rows in the same form, written independently by a referee of chapter 7 as a
#: second hand-written set, to see whether what :data:`QA_SET` shows is a property of it.
QA_SET_2 = _rows("""
How do I undo the last git commit? | Run git reset --soft HEAD~1 to keep the changes staged, or --hard to discard them. | How do I rename a git branch? | Undoing the most recent git commit.
What is the normal resting heart rate for adults? | Between 60 and 100 beats per minute; athletes often sit lower. | Why does my heart race after coffee? | The usual resting pulse of an adult.
Can a landlord enter my flat without notice? | Usually not: most tenancy laws require reasonable notice except in emergencies. | Can a landlord keep my deposit for normal wear? | Whether a landlord may enter without giving notice.
How long can cooked rice stay in the fridge? | Eat it within one day; bacteria such as Bacillus cereus survive cooking. | Can I freeze cooked rice? | How long cooked rice keeps when refrigerated.
Why did the Roman Empire fall? | A mix of overspending, invasions, political instability and a divided administration. | Who was the last Roman emperor in the West? | The causes of the fall of the Roman Empire.
What does a Python list comprehension do? | It builds a new list from an iterable in one expression, optionally filtering items. | What is the difference between a list and a tuple in Python? | The purpose of list comprehensions in Python.
How often should I water a cactus? | Every two to four weeks in summer and hardly at all in winter; let the soil dry out. | Why is my cactus turning yellow? | How frequently a cactus needs water.
What is the penalty for late tax filing? | Typically a percentage of the unpaid tax for each month late, plus interest. | Can I get an extension to file my taxes? | The fine for filing taxes late.
How do noise-cancelling headphones work? | Microphones pick up ambient sound and speakers play an inverted wave that cancels it. | Are noise-cancelling headphones bad for your ears? | The way noise-cancelling headphones function.
What causes a rainbow? | Sunlight is refracted, reflected and dispersed inside raindrops, splitting it into colours. | Why is a double rainbow reversed? | What produces a rainbow.
How many calories should I eat to lose weight? | Roughly 500 fewer than you burn each day for about half a kilo a week. | Is it bad to skip breakfast? | The calorie intake needed for weight loss.
When was the printing press invented? | Around 1440, by Johannes Gutenberg in Mainz. | How did the printing press change Europe? | The date of the invention of the printing press.
How do I change a flat tyre? | Loosen the nuts, jack up the car, swap the wheel, then tighten the nuts in a star pattern. | How long can I drive on a spare tyre? | Changing a flat tyre on a car.
What is the difference between weather and climate? | Weather is short-term conditions; climate is the average over decades. | Why is the climate getting warmer? | How weather differs from climate.
How does a bill become law in the United States? | Both chambers of Congress pass it and the President signs it, or Congress overrides a veto. | How many senators does each state have? | The process by which a US bill becomes law.
What is the boiling point of olive oil? | It does not really boil; it starts to smoke at around 190 to 210 degrees Celsius. | Is extra virgin olive oil healthier than regular olive oil? | The temperature at which olive oil boils.
Why do dogs wag their tails? | To communicate: wagging signals arousal, often friendliness but sometimes tension. | Why do dogs eat grass? | The reason dogs wag their tails.
How do I convert Celsius to Fahrenheit? | Multiply by nine fifths and add thirty-two. | What is absolute zero in Fahrenheit? | Converting Celsius temperatures to Fahrenheit.
What is a black hole? | A region where gravity is so strong that nothing, not even light, can escape. | What happens if you fall into a black hole? | What a black hole is.
How do I clean a cast iron pan? | Scrub with hot water and a brush, dry it at once and rub in a thin layer of oil. | Can I use soap on cast iron? | Cleaning a cast iron skillet.
Who discovered penicillin? | Alexander Fleming, in 1928, from a mould that killed bacteria on a plate. | How does penicillin kill bacteria? | The discoverer of penicillin.
How much does the Earth weigh? | Its mass is about six times ten to the twenty-four kilograms. | How old is the Earth? | The mass of the Earth.
What is a mortgage? | A loan to buy property in which the property serves as security for the lender. | Should I choose a fixed or variable mortgage rate? | What a mortgage is.
Why do we dream? | Nobody knows for sure; theories include memory consolidation and emotional processing. | Why do I forget my dreams? | The reason people dream.
How do solar panels generate electricity? | Photovoltaic cells let light knock electrons loose in silicon, creating a current. | How long do solar panels last? | How solar panels produce power.
What is the population of Tokyo? | About fourteen million in the city proper and over thirty-seven million in the metro area. | What is the best time of year to visit Tokyo? | The number of people living in Tokyo.
How do I get rid of hiccups? | Hold your breath, sip cold water slowly or breathe into a paper bag. | Why do babies get hiccups so often? | Stopping a bout of hiccups.
What is the offside rule in football? | An attacker is offside if nearer the goal line than the ball and the second-last defender when it is played. | How many substitutes are allowed in a football match? | The offside rule in football.
Why is the Dead Sea so salty? | Water flows in but can only leave by evaporation, which leaves the salt behind. | Can you sink in the Dead Sea? | The reason the Dead Sea is so salty.
How do I write a cover letter? | Address it to a person, say why you want the role and give two concrete examples of fit. | How long should a CV be? | Writing a cover letter for a job.
What is the speed of sound? | About 343 metres per second in dry air at 20 degrees Celsius. | Why do jets make a sonic boom? | How fast sound travels.
How do I lower my blood pressure? | Cut salt, exercise regularly, limit alcohol and, if prescribed, take medication. | What is a normal blood pressure reading? | Ways to reduce blood pressure.
Who built the pyramids of Giza? | Paid Egyptian labourers under the pharaohs of the Fourth Dynasty, about 4,500 years ago. | How were the pyramid stones moved? | The builders of the Giza pyramids.
What is machine learning? | Programs that improve at a task by fitting their parameters to data instead of following fixed rules. | Which programming language is best for machine learning? | What machine learning means.
How often should I replace my toothbrush? | Every three to four months, or sooner if the bristles fray. | Are electric toothbrushes better than manual ones? | How frequently to replace a toothbrush.
Why do volcanoes erupt? | Molten rock rises because it is less dense, and dissolved gases build pressure until it bursts out. | Which volcano is the most dangerous in the world? | The reason volcanoes erupt.
How do I make a cup of green tea? | Use water at about 80 degrees, not boiling, and steep the leaves for two to three minutes. | Does green tea contain caffeine? | Making a cup of green tea.
What is the longest river in the world? | The Nile, at about 6,650 kilometres, though some measurements favour the Amazon. | Which river carries the most water? | The longest river on Earth.
How do I stop procrastinating? | Break the task into small steps, start with five minutes and remove distractions. | Why do people procrastinate? | Overcoming procrastination.
What currency is used in Switzerland? | The Swiss franc, although many shops near the borders accept euros. | Is Switzerland part of the European Union? | The currency of Switzerland.
""")  # noqa: E501


@dataclass(frozen=True)
class EmbeddingModel:
    r"""A trained network: ReLU hidden layer, linear embedding, class vectors.

    Logits :math:`\langle e, c_k\rangle + b_k` (``"dot"``) or :math:`s\cos(e, c_k)`
    (``"cosine"``; a zero vector has cosine 0), :math:`c_k` the rows of ``class_vectors``;
    ``"alignment"`` models have no classes. ``loss``: the training loss before each step.
    """

    objective: str
    W1: NDArray[np.float64]
    b1: NDArray[np.float64]
    P: NDArray[np.float64]
    class_vectors: NDArray[np.float64]
    bias: NDArray[np.float64]
    scale: float
    weight_decay: float
    loss: NDArray[np.float64]
    test_accuracy: float | None

    def __post_init__(self) -> None:
        for name in ("W1", "b1", "P", "class_vectors", "bias", "loss"):
            ndim = 2 if name in _MATRICES else 1
            value = as_real_array(getattr(self, name), name, ndim=ndim, nonempty=False)
            object.__setattr__(self, name, value.astype(np.float64))
        h, d, k = self.W1.shape[1], self.P.shape[1], self.class_vectors.shape[0]
        for name, shape in {"b1": (h,), "P": (h, d), "class_vectors": (k, d), "bias": (k,)}.items():
            if getattr(self, name).shape != shape:
                raise ValueError(f"{name} has shape {getattr(self, name).shape}; expected {shape}")

    @property
    def dim(self) -> int:
        """Embedding dimension (columns of ``P``)."""
        return int(self.P.shape[1])

    @property
    def n_classes(self) -> int:
        """Number of classes (0 for ``"alignment"``)."""
        return int(self.class_vectors.shape[0])


Params = dict[str, torch.Tensor]
_WEIGHTS = ("W1", "b1", "P", "class_vectors", "bias")
_MATRICES = ("W1", "P", "class_vectors")


@contextmanager
def _one_thread() -> Iterator[None]:
    """PyTorch on one thread: the same summation order every run, no contention."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def _embeddings(params: Params, x: torch.Tensor) -> torch.Tensor:
    return torch.relu(x @ params["W1"] + params["b1"]) @ params["P"]


def _logits(params: Params, x: torch.Tensor, objective: str, scale: float) -> torch.Tensor:
    e = _embeddings(params, x)
    if objective == "dot":
        return e @ params["class_vectors"].T + params["bias"]
    return scale * F.normalize(e, dim=1) @ F.normalize(params["class_vectors"], dim=1).T


def _fit(
    params: Params, loss: Callable[[], torch.Tensor], steps: int, rate: float, decay: float = 0.0
) -> NDArray[np.float64]:
    """Full-batch Adam on ``loss()`` (AdamW's decay of the matrices if ``decay``); the losses."""
    for value in params.values():
        value.requires_grad_(True)
    matrices, rest = ([v for n, v in params.items() if (n in _MATRICES) == m] for m in (1, 0))
    groups = [{"params": matrices, "weight_decay": decay}, {"params": rest, "weight_decay": 0.0}]
    optimizer = torch.optim.AdamW(groups, lr=rate) if decay else torch.optim.Adam(groups, lr=rate)
    history = np.empty(steps)
    with _one_thread():
        for step in range(steps):
            optimizer.zero_grad()
            value = loss()
            history[step] = value.item()
            if not math.isfinite(history[step]):
                raise ValueError(f"training overflowed at step {step}: rescale the inputs")
            value.backward()
            optimizer.step()
    return history


def _sizes(**sizes: int) -> list[int]:
    return [as_int_scalar(value, name, minimum=1) for name, value in sizes.items()]


def _initial(n_inputs: int, hidden: int, dim: int, classes: int, seed: int) -> Params:
    """He-normal ``W1``; ``P`` and class vectors with variance 1/fan-in; zero biases."""
    rng = np.random.default_rng(as_int_scalar(seed, "seed", minimum=0))
    arrays = {
        "W1": math.sqrt(2.0 / n_inputs) * standard_normal(rng, (n_inputs, hidden)),
        "b1": np.zeros(hidden),
        "P": standard_normal(rng, (hidden, dim)) / math.sqrt(hidden),
        "class_vectors": standard_normal(rng, (classes, dim)) / math.sqrt(dim),
        "bias": np.zeros(classes),
    }
    return {name: torch.from_numpy(value) for name, value in arrays.items()}


def _model(objective: str, params: Params, scale: float, decay: float, loss, accuracy):
    arrays = {name: value.detach().numpy().copy() for name, value in params.items()}
    return EmbeddingModel(
        objective, **arrays, scale=scale, weight_decay=decay, loss=loss, test_accuracy=accuracy
    )


def train_embedding_model(
    x_train: ArrayLike,
    y_train: ArrayLike,
    x_test: ArrayLike,
    y_test: ArrayLike,
    *,
    objective: Literal["dot", "cosine"],
    dim: int = 16,
    n_hidden: int = 64,
    steps: int = 300,
    learning_rate: float = 0.01,
    scale: float = 10.0,
    weight_decay: float = 0.0,
    decoupled: bool = False,
    seed: int = 0,
) -> EmbeddingModel:
    r"""Train an embedding network with a dot-product or a cosine classification head.

    Full-batch Adam on the mean cross-entropy of :func:`class_logits` plus the L2
    penalty :math:`\lambda(\lVert W_1\rVert_F^2 + \lVert P\rVert_F^2 + \lVert
    C\rVert_F^2)`, :math:`\lambda` the ``weight_decay``; with ``decoupled=True``,
    AdamW's decoupled decay of the three matrices instead (no penalty in the loss).
    Initial weights from ``default_rng(seed)`` (``W1`` He-normal, ``P`` and the class
    vectors with variance 1/fan-in, zero biases); classes ``0 .. max(y_train)``;
    ``test_accuracy`` on ``(x_test, y_test)``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> x, y = rng.random((60, 8)), rng.integers(0, 3, size=60)
    >>> model = train_embedding_model(x, y, x, y, objective="cosine", dim=4,
    ...                               n_hidden=8, steps=30)
    >>> model.loss.shape, model.P.shape, model.class_vectors.shape
    ((30,), (8, 4), (3, 4))
    >>> bool(model.loss[-1] < model.loss[0])
    True
    """
    if objective not in OBJECTIVES:
        raise ValueError(f"objective must be 'dot' or 'cosine'; got {objective!r}")
    dim, n_hidden, steps = _sizes(dim=dim, n_hidden=n_hidden, steps=steps)
    rate = as_float_scalar(learning_rate, "learning_rate", positive=True)
    scale = as_float_scalar(scale, "scale", positive=True)
    decay = as_float_scalar(weight_decay, "weight_decay", nonnegative=True)
    x = torch.from_numpy(as_real_matrix(x_train, "x_train"))
    y = as_class_labels(y_train, "y_train", x.shape[0], max_classes=1 << 16)
    x_held = torch.from_numpy(as_feature_matrix(x_test, "x_test", x.shape[1]))
    y_held = as_class_labels(y_test, "y_test", x_held.shape[0], int(y.max()) + 1)
    params = _initial(x.shape[1], n_hidden, dim, int(y.max()) + 1, seed)
    targets, weights = torch.from_numpy(y), [params[n] for n in _MATRICES]
    penalty = 0.0 if decoupled else decay

    def loss() -> torch.Tensor:
        value = F.cross_entropy(_logits(params, x, objective, scale), targets)
        return value + penalty * sum((w * w).sum() for w in weights) if penalty else value

    history = _fit(params, loss, steps, rate, decay - penalty)
    with torch.no_grad():
        predicted = _logits(params, x_held, objective, scale).numpy().argmax(axis=1)
    return _model(objective, params, scale, decay, history, float(np.mean(predicted == y_held)))


def train_alignment_only(
    x: ArrayLike,
    *,
    dim: int = 16,
    n_hidden: int = 64,
    steps: int = 50,
    noise: float = 0.1,
    learning_rate: float = 0.01,
    seed: int = 0,
) -> EmbeddingModel:
    r"""Train the network with positive pairs only: the classic road to collapse.

    Each step draws a noisy copy :math:`x' = x + \sigma\varepsilon` of every row
    (:math:`\sigma` the ``noise``, :math:`\varepsilon` from ``default_rng(seed + 1)``)
    and takes an Adam step on :math:`1 - \frac1n\sum_i \cos(e_i, e'_i)`: nothing pushes
    different rows apart, so every row can go the same way.

    Examples
    --------
    >>> x = np.random.default_rng(0).random((50, 8))
    >>> model = train_alignment_only(x, dim=4, n_hidden=8, steps=100)
    >>> bool(model.loss[-1] < model.loss[0] / 10)
    True
    """
    dim, n_hidden, steps = _sizes(dim=dim, n_hidden=n_hidden, steps=steps)
    noise = as_float_scalar(noise, "noise", nonnegative=True)
    rate = as_float_scalar(learning_rate, "learning_rate", positive=True)
    rows = as_real_matrix(x, "x")
    params = _initial(rows.shape[1], n_hidden, dim, 0, seed)
    clean, noise_rng = torch.from_numpy(rows), np.random.default_rng(seed + 1)

    def loss() -> torch.Tensor:
        noisy = torch.from_numpy(rows + noise * standard_normal(noise_rng, rows.shape))
        pairs = F.cosine_similarity(_embeddings(params, clean), _embeddings(params, noisy), dim=1)
        return 1.0 - pairs.mean()

    return _model("alignment", params, 10.0, 0.0, _fit(params, loss, steps, rate), None)


def _forward(model: EmbeddingModel, x: ArrayLike, what: str) -> NDArray[np.float64]:
    if not isinstance(model, EmbeddingModel):
        raise ValueError(f"model must be an EmbeddingModel; got {type(model).__name__}")
    if what == "logits" and model.objective == "alignment":
        raise ValueError("model was trained with objective 'alignment' and has no classes")
    inputs = torch.from_numpy(as_feature_matrix(x, "x", model.W1.shape[0]))
    params = {name: torch.from_numpy(getattr(model, name)) for name in _WEIGHTS}
    with torch.no_grad():
        if what == "hidden features":
            out = torch.relu(inputs @ params["W1"] + params["b1"])
        elif what == "embeddings":
            out = _embeddings(params, inputs)
        else:
            out = _logits(params, inputs, model.objective, model.scale)
    if not torch.isfinite(out).all():
        raise ValueError(f"the {what} overflow; expected inputs on the scale of the training data")
    return out.numpy()


def hidden_features(model: EmbeddingModel, x: ArrayLike) -> NDArray[np.float64]:
    r"""The ReLU hidden layer :math:`\max(x W_1 + b_1, 0)`, nonnegative (example: :func:`embed`)."""
    return _forward(model, x, "hidden features")


def embed(model: EmbeddingModel, x: ArrayLike) -> NDArray[np.float64]:
    r"""The embeddings :math:`e = h P` of the rows of ``x``.

    Examples
    --------
    >>> model = EmbeddingModel("dot", [[1.0, -1.0]], [0.0, 0.5], [[1.0], [2.0]],
    ...                        [[1.0]], [0.0], 10.0, 0.0, [0.0], None)
    >>> hidden_features(model, [[2.0], [-1.0]]).tolist(), embed(model, [[2.0], [-1.0]]).tolist()
    ([[2.0, 0.0], [0.0, 1.5]], [[2.0], [3.0]])
    """
    return _forward(model, x, "embeddings")


def class_logits(model: EmbeddingModel, x: ArrayLike) -> NDArray[np.float64]:
    r"""Class logits: :math:`e C^\top + b` (dot) or :math:`s\cos(e, c_k)` (cosine).

    Examples
    --------
    >>> model = EmbeddingModel("cosine", [[1.0, 0.0]], [0.0, 0.0], [[1.0, 0.0], [0.0, 1.0]],
    ...                        [[1.0, 0.0], [1.0, 1.0]], [0.0, 0.0], 10.0, 0.0, [0.0], None)
    >>> class_logits(model, [[3.0], [0.0]]).round(4).tolist()
    [[10.0, 7.0711], [0.0, 0.0]]
    """
    return _forward(model, x, "logits")


def rescale_embedding(model: EmbeddingModel, scales: ArrayLike) -> EmbeddingModel:
    r"""The model with :math:`P \to P\,\mathrm{diag}(s)` and :math:`C \to C\,\mathrm{diag}(1/s)`.

    Chapter 6's freedom: dot logits stay, cosines between embeddings do not.

    Examples
    --------
    >>> model = EmbeddingModel("dot", [[1.0, 0.0]], [0.0, 0.0], [[1.0, 2.0], [0.0, 1.0]],
    ...                        [[1.0, 1.0]], [0.0], 10.0, 0.0, [0.0], None)
    >>> rescaled = rescale_embedding(model, [4.0, 0.5])
    >>> rescaled.P.tolist(), rescaled.class_vectors.tolist()
    ([[4.0, 1.0], [0.0, 0.5]], [[0.25, 2.0]])
    >>> class_logits(model, [[1.0]]).tolist(), class_logits(rescaled, [[1.0]]).tolist()
    ([[3.0]], [[3.0]])
    """
    if not isinstance(model, EmbeddingModel):
        raise ValueError(f"model must be an EmbeddingModel; got {type(model).__name__}")
    s = as_real_array(scales, "scales", ndim=1).astype(np.float64)
    if s.shape != (model.dim,) or not np.all(s > 0):
        raise ValueError(f"scales must be {model.dim} positive numbers (model.dim); got {s}")
    return replace(model, P=model.P * s, class_vectors=model.class_vectors / s)


def _unit(E: ArrayLike, name: str = "E") -> NDArray[np.float64]:
    rows = as_real_matrix(E, name)
    norms = np.sqrt(np.sum(rows * rows, axis=1))
    if not np.all(norms > 0):
        raise ValueError(f"{name} has a zero row ({int(np.argmin(norms))}), which has no cosine")
    return rows / norms[:, None]


def all_but_the_top(E: ArrayLike, n_components: int, *, fit: ArrayLike | None = None):
    r"""Subtract the mean row and remove the top principal directions (Mu and Viswanath, 2018).

    :math:`e \to (e - \bar e) - \sum_{j \le D} \langle e - \bar e, v_j\rangle v_j`, the
    mean and the top :math:`D` (``n_components``) right singular vectors :math:`v_j`
    from the centred rows of ``fit`` (default ``E``); ``D = 0`` only centres.

    Examples
    --------
    >>> E = np.array([[2.0, 0.0, 1.0], [-2.0, 0.0, 1.0], [0.0, 1.0, 1.0], [0.0, -1.0, 1.0]])
    >>> all_but_the_top(E, 0)[:, 2].tolist(), (all_but_the_top(E, 1) + 0.0).tolist()
    ([0.0, 0.0, 0.0, 0.0], [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, -1.0, 0.0]])
    """
    rows = as_real_matrix(E, "E")
    reference = rows if fit is None else as_feature_matrix(fit, "fit", rows.shape[1])
    limit = min(reference.shape) - 1
    n_components = as_int_scalar(n_components, "n_components", minimum=0, maximum=limit)
    mean = reference.mean(axis=0)
    top = np.linalg.svd(reference - mean, full_matrices=False)[2][:n_components]
    return (rows - mean) - ((rows - mean) @ top.T) @ top


def k_occurrence(E: ArrayLike, k: int = 10, *, chunk: int = 1000) -> NDArray[np.int64]:
    r"""How often each row is among the other rows' ``k`` nearest neighbours by cosine.

    The counts :math:`N_k` average :math:`k`; hubs (rows in very many lists) and rows
    in none skew their distribution to the right (hubness, Radovanović et al., 2010;
    :func:`scipy.stats.skew`). ``chunk`` rows at a time; among equal cosines the choice
    is ``numpy.argpartition``'s.

    Examples
    --------
    >>> k_occurrence([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.6, 0.4]], 1).tolist()
    [1, 2, 0, 1]
    """
    unit = _unit(E)
    n = unit.shape[0]
    k = as_int_scalar(k, "k", minimum=1, maximum=n - 1)
    chunk = as_int_scalar(chunk, "chunk", minimum=1)
    counts = np.zeros(n, dtype=np.int64)
    for start in range(0, n, chunk):
        S = unit[start : start + chunk] @ unit.T
        S[np.arange(S.shape[0]), np.arange(start, start + S.shape[0])] = -np.inf  # not itself
        counts += np.bincount(np.argpartition(-S, k - 1, axis=1)[:, :k].ravel(), minlength=n)
    return counts


def answer_retrieval(queries: ArrayLike, answers: ArrayLike, others: ArrayLike) -> dict:
    """Retrieve by cosine from the pool of all ``answers`` and ``others`` (other questions).

    Row ``i`` of ``queries`` is answered by row ``i`` of ``answers``. Returns the share
    of queries whose answer comes first ("recall@1"), the mean of 1 / its rank ("MRR";
    ties in its favour) and the share whose first hit is in ``others`` ("question first").

    Examples
    --------
    >>> answer_retrieval([[1.0, 0.1], [0.0, 1.0]], [[1.0, 0.0], [0.3, 1.0]],
    ...                  [[1.0, 0.2], [-1.0, 0.0]])
    {'recall@1': 0.5, 'MRR': 0.75, 'question first': 0.5}
    """
    Q, A, others = _unit(queries, "queries"), _unit(answers, "answers"), _unit(others, "others")
    if A.shape != Q.shape or others.shape[1] != Q.shape[1]:
        raise ValueError(f"expected one answer per query and one width; got {A.shape}, {Q.shape}")
    S = Q @ np.vstack([A, others]).T
    ranks = 1 + np.sum(S > np.diag(S)[:, None], axis=1)
    first = float(np.mean(np.argmax(S, axis=1) >= len(A)))
    recall, mrr = float(np.mean(ranks == 1)), float(np.mean(1 / ranks))
    return {"recall@1": recall, "MRR": mrr, "question first": first}


def train_query_projection(
    queries: ArrayLike,
    answers: ArrayLike,
    others: ArrayLike,
    *,
    weight_decay: float = 1e-3,
    steps: int = 50,
    learning_rate: float = 0.01,
    temperature: float = 0.05,
) -> NDArray[np.float64]:
    r"""A linear map :math:`W` for queries only, trained so that :math:`qW` finds its answer.

    Full-batch Adam from :math:`W = I` on the cross-entropy of :math:`\cos(q_i W, p)/\tau`
    over the pool :math:`p` of ``answers`` and ``others`` (target: :math:`q_i`'s answer)
    plus :math:`\lambda\lVert W - I\rVert_F^2`. Answers are not mapped: the similarity
    becomes asymmetric.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> A = rng.normal(size=(6, 4)); Q = A + rng.normal(size=(6, 4)) + 2
    >>> W = train_query_projection(Q, A, -A, steps=100)
    >>> answer_retrieval(Q @ W, A, -A)["MRR"] > answer_retrieval(Q, A, -A)["MRR"]
    True
    """
    Q = as_real_matrix(queries, "queries")
    A = as_feature_matrix(answers, "answers", Q.shape[1])
    pool = np.vstack([A, as_feature_matrix(others, "others", Q.shape[1])])
    if A.shape[0] != Q.shape[0]:
        raise ValueError(f"answers has {A.shape[0]} rows; expected one per query ({Q.shape[0]})")
    decay = as_float_scalar(weight_decay, "weight_decay", nonnegative=True)
    (steps,) = _sizes(steps=steps)
    rate = as_float_scalar(learning_rate, "learning_rate", positive=True)
    tau = as_float_scalar(temperature, "temperature", positive=True)
    q, pool_t = torch.from_numpy(Q), F.normalize(torch.from_numpy(pool), dim=1)
    params = {"W": torch.zeros(Q.shape[1], Q.shape[1], dtype=torch.float64)}
    targets = torch.arange(len(Q))

    def loss() -> torch.Tensor:
        mapped = F.normalize(q + q @ params["W"], dim=1)
        return F.cross_entropy(mapped @ pool_t.T / tau, targets) + decay * (params["W"] ** 2).sum()

    _fit(params, loss, steps, rate)
    return np.eye(Q.shape[1]) + params["W"].detach().numpy()

"""Compile (optimise) the LLM picker for a library from labeled citation excerpts.

Training examples are built with our own pipeline: the excerpt's slot context, the candidates
retrieval ranks for it (top ``select_candidates``) with the gold paper put in when retrieval
missed it, shuffled with a seed so the answer is not always "1", and the gold candidate number.
Excerpts marked unanswerable (no gold) teach abstention: their answer is "none" (at most as many
as answerable ones; the training order is shuffled with the seed).
``dspy.BootstrapFewShot`` (or ``dspy.MIPROv2``) compiles the picker against an exact-match metric;
the program is saved in ``<library>/programs/`` where the LLM selector picks up the newest one.
"""

from __future__ import annotations

import json
import logging
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from citefinder.errors import ConfigError, InputError
from citefinder.select.answer import interpret_titles
from citefinder.select.programs import new_program_path

if TYPE_CHECKING:
    from citefinder.config import Settings
    from citefinder.evaluate.dataset import EvalItem
    from citefinder.library.store import Library
    from citefinder.types import Paper

log = logging.getLogger(__name__)

Optimizer = Literal["bootstrap", "mipro"]
# progress(done, total, stage): stage "examples" (total = excerpts), "compile" (total = training
# examples for bootstrap, None for MIPROv2, whose number of trials depends on its search), "saved".
Progress = Callable[[int, "int | None", str], None]


@dataclass(frozen=True)
class TrainingExample:
    """One picker exercise: a context, numbered candidates, and the right answer(s)."""

    item_id: str
    context: str
    papers: tuple["Paper", ...]  # in the shown (shuffled) order
    gold_numbers: tuple[int, ...]  # 1-based; empty = the answer is "none"

    @property
    def answer(self) -> str:
        return str(self.gold_numbers[0]) if self.gold_numbers else "none"

    def to_dspy(self, abstract_chars: int) -> Any:
        import dspy

        from citefinder.llm.signatures import format_candidates
        from citefinder.types import Candidate

        return dspy.Example(
            citation_context=self.context,
            candidates=format_candidates([Candidate(p) for p in self.papers], abstract_chars),
            selected=self.answer,
            confidence="1.0",
            titles=[p.title for p in self.papers],
            gold_numbers=list(self.gold_numbers),
        ).with_inputs("citation_context", "candidates")


@dataclass(frozen=True)
class OptimizeReport:
    """What ``optimize`` made: where the program is and how it was compiled."""

    program: Path
    copy: Path | None
    optimizer: str
    examples: int
    abstain_examples: int
    skipped: tuple[str, ...]  # "<item id>: reason"
    demos: int
    bootstrapped_demos: int
    metric_calls: int
    elapsed_s: float
    info: dict[str, Any] = field(default_factory=dict)


def exact_match(example: Any, prediction: Any, trace: Any = None) -> bool:
    """1 when the predicted answer maps (number, title or fuzzy title) to a gold candidate, or is
    "none" for an excerpt without a gold candidate; anything else is wrong."""
    answer = interpret_titles(str(getattr(prediction, "selected", "") or ""), list(example.titles))
    gold = list(example.gold_numbers)
    if not gold:
        return answer.kind == "none"
    return answer.kind == "pick" and answer.index + 1 in gold


def build_examples(
    items: Sequence["EvalItem"],
    settings: "Settings",
    library: "Library",
    *,
    seed: int = 0,
    progress: Progress | None = None,
) -> tuple[list[TrainingExample], list[str]]:
    """Training examples from labeled excerpts, and "<id>: reason" for each excerpt left out.

    Retrieval runs without the LLM (threshold selector, no rewrite) so building costs no LLM call.
    """
    from citefinder.pipeline.pipeline import Pipeline
    from citefinder.select.fallback import ThresholdSelector
    from citefinder.text.slots import find_slots

    plain = settings.with_overrides(llm_rewrite=False)
    pipeline = Pipeline(plain, library, selector=ThresholdSelector(settings.confidence_threshold))
    examples: list[TrainingExample] = []
    skipped: list[str] = []
    for n, item in enumerate(items, start=1):
        gold_papers = library.get(list(item.gold))
        slots = find_slots(item.text, settings.context_sentences)
        if not slots:
            skipped.append(f"{item.id}: no [CITATION] slot in the text")
        elif item.gold and not gold_papers:
            skipped.append(f"{item.id}: none of its gold papers is in the library")
        elif not item.gold and item.answerable:
            skipped.append(f"{item.id}: no gold paper given")
        else:
            result = pipeline.cite_slot(slots[0])
            papers = [c.paper for c in result.candidates[: settings.select_candidates]]
            gold_ids = {p.doc_id for p in gold_papers}
            if gold_papers and not gold_ids & {p.doc_id for p in papers}:
                papers = papers[: settings.select_candidates - 1] + [gold_papers[0]]
            if papers:
                random.Random(f"{seed}:{item.id}").shuffle(papers)
                numbers = tuple(i for i, p in enumerate(papers, start=1) if p.doc_id in gold_ids)
                examples.append(TrainingExample(item.id, slots[0].context, tuple(papers), numbers))
            else:
                skipped.append(f"{item.id}: retrieval found no candidates")
        if progress:
            progress(n, len(items), "examples")
    return examples, skipped


def balance(examples: list[TrainingExample], seed: int = 0) -> tuple[list[TrainingExample], list[str]]:
    """At most as many abstention examples as answerable ones (at least one), in a seeded random order.

    Demos are taken in training order: a file sorted by id with unanswerable excerpts first would
    otherwise teach the picker to answer "none" to everything (seen with SmolLM2 on CiteME's train split).
    """
    rng = random.Random(seed)
    answerable = [e for e in examples if e.gold_numbers]
    abstain = [e for e in examples if not e.gold_numbers]
    keep = max(1, len(answerable))
    dropped: list[str] = []
    if len(abstain) > keep:
        kept = rng.sample(abstain, keep)
        dropped = [f"{e.item_id}: more abstention examples than answerable ones (kept {keep})"
                   for e in abstain if e not in kept]
        abstain = kept
    balanced = answerable + abstain
    rng.shuffle(balanced)
    return balanced, dropped


def compile_picker(
    trainset: list[Any],
    lm: Any,
    *,
    optimizer: Optimizer = "bootstrap",
    demos: int = 3,
    seed: int = 0,
    progress: Progress | None = None,
) -> tuple[Any, int]:
    """The compiled picker and how many times the metric ran. ``lm`` is both teacher and student."""
    import dspy

    from citefinder.select.llm import load_picker

    calls = 0
    total = len(trainset) if optimizer == "bootstrap" else None

    def metric(example: Any, prediction: Any, trace: Any = None) -> bool:
        nonlocal calls
        calls += 1
        if progress:
            progress(min(calls, total) if total else calls, total, "compile")
        return exact_match(example, prediction, trace)

    student = load_picker(None)
    # A tiny or flaky model fails to parse on many examples: tolerate every one of them.
    max_errors = 10 * len(trainset) + 10
    with dspy.context(lm=lm):
        if optimizer == "bootstrap":
            teleprompter = dspy.BootstrapFewShot(
                metric=metric, max_bootstrapped_demos=demos, max_labeled_demos=demos, max_errors=max_errors
            )
            program = teleprompter.compile(student, trainset=trainset)
        elif optimizer == "mipro":
            try:
                import optuna  # noqa: F401 - MIPROv2 searches with optuna
            except ImportError as e:
                raise ConfigError("--optimizer mipro needs optuna: pip install -r requirements-llm.txt "
                                  "(or use the default BootstrapFewShot optimizer)") from e
            if len(trainset) < 2:
                raise InputError("MIPROv2 needs at least 2 training examples (it holds some out for validation).")
            teleprompter = dspy.MIPROv2(
                metric=metric, prompt_model=lm, task_model=lm, auto="light", max_bootstrapped_demos=demos,
                max_labeled_demos=demos, num_threads=1, seed=seed, max_errors=max_errors, verbose=False,
            )
            program = teleprompter.compile(student, trainset=trainset)
        else:
            raise ConfigError(f"unknown optimizer {optimizer!r}: use 'bootstrap' or 'mipro'")
    program.set_lm(None)
    return program, calls


def optimize(
    settings: "Settings",
    items: Sequence["EvalItem"],
    library: "Library",
    *,
    optimizer: Optimizer = "bootstrap",
    demos: int = 3,
    seed: int = 0,
    source: str = "",
    lm: Any = None,
    progress: Progress | None = None,
) -> OptimizeReport:
    """Build examples, compile the picker, save it as the library's newest program (a copy elsewhere is the
    caller's to write, through the one writer: ``citefinder optimize -o``)."""
    from citefinder.llm.lm import make_lm

    start = time.perf_counter()
    if lm is None:
        lm = make_lm(settings)  # raises ConfigError without llm_model
    examples, skipped = build_examples(items, settings, library, seed=seed, progress=progress)
    if not examples:
        raise InputError(
            f"None of the {len(items)} labeled excerpts can be used: " + "; ".join(skipped[:5])
            + ". Import the cited papers into the library, or check the file's gold doc_ids."
        )
    examples, dropped = balance(examples, seed)
    skipped += dropped
    trainset = [e.to_dspy(settings.abstract_chars) for e in examples]
    log.info("compiling the picker with %s on %d examples", optimizer, len(trainset))
    program, calls = compile_picker(trainset, lm, optimizer=optimizer, demos=demos, seed=seed, progress=progress)

    path = new_program_path(library.path)
    path.parent.mkdir(parents=True, exist_ok=True)
    n_demos = sum(len(p.demos) for p in program.predictors())
    bootstrapped = sum(1 for p in program.predictors() for d in p.demos if d.get("augmented"))
    info: dict[str, Any] = {
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "optimizer": optimizer,
        "model": settings.llm_model,
        "examples": len(examples),
        "abstain_examples": sum(1 for e in examples if not e.gold_numbers),
        "skipped": len(skipped),
        "source": source,
        "demos": n_demos,
        "bootstrapped_demos": bootstrapped,
        "seed": seed,
        "abstract_chars": settings.abstract_chars,
        "select_candidates": settings.select_candidates,
    }
    save_program(program, path, info)
    if progress:
        progress(1, 1, "saved")
    return OptimizeReport(
        program=path, copy=None, optimizer=optimizer, examples=len(examples),
        abstain_examples=info["abstain_examples"], skipped=tuple(skipped), demos=n_demos,
        bootstrapped_demos=bootstrapped, metric_calls=calls, elapsed_s=time.perf_counter() - start, info=info,
    )


def save_program(program: Any, path: Path, info: dict[str, Any]) -> None:
    """DSPy's JSON state of ``program`` with ``info`` under the ``"citefinder"`` key (DSPy ignores it).

    DSPy saves into a temporary folder; the program is then written whole through the one writer
    (:func:`citefinder.text.safewrite.atomic_write`): the selector never reads half a program.
    """
    import tempfile

    from citefinder.text.safewrite import atomic_write

    with tempfile.TemporaryDirectory(dir=path.parent, prefix=".saving-") as tmp:
        saved = Path(tmp) / path.name
        program.save(str(saved))
        data = json.loads(saved.read_text(encoding="utf-8"))
    data["citefinder"] = info
    atomic_write(path, json.dumps(data, indent=1, ensure_ascii=False).encode("utf-8"))

"""The DSPy LM built from the settings, and what its calls cost, for the traces.

Shared by the selector, the query rewriter and the optimizer. The LM is always passed with
``dspy.context(lm=...)`` or ``module.set_lm``; nothing here calls ``dspy.configure``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from citefinder.errors import ConfigError, ModelLoadError

if TYPE_CHECKING:
    from citefinder.config import Settings

LLM_EXTRA = "pip install 'citefinder[llm]'"
LLM_PACKAGES = ("dspy", "litellm", "openai")


def import_dspy() -> Any:
    """The ``dspy`` module; a :class:`ModelLoadError` naming the ``[llm]`` extra when it is not installed."""
    try:
        import dspy
    except ImportError as e:
        raise ModelLoadError(
            f"The LLM features need DSPy, which is not installed ({e}). Install them with: {LLM_EXTRA} "
            "(or, from a checkout, pip install -e '.[llm]')."
        ) from e
    return dspy


def client_kwargs(settings: "Settings") -> dict[str, str]:
    """api_base/api_key for dspy.LM, leaving out what is unset.

    An explicit ``api_key=None`` makes DSPy refuse the call ("empty credential"); a local
    OpenAI-compatible server (llama.cpp, vLLM) without a key gets a placeholder, which it ignores.
    """
    kwargs: dict[str, str] = {}
    if settings.llm_api_base:
        kwargs["api_base"] = settings.llm_api_base
    if settings.llm_api_key is not None and settings.llm_api_key.get_secret_value():
        kwargs["api_key"] = settings.llm_api_key.get_secret_value()
    elif settings.llm_api_base:
        kwargs["api_key"] = "no-key"
    return kwargs


def make_lm(settings: "Settings", **overrides: Any) -> Any:
    """A ``dspy.LM`` for ``settings.llm_model`` with its token cap, timeout, retries and temperature.

    Caching is off: a citation answer must come from the model now, not from an earlier session.
    Use a model prefix that sends ``max_tokens`` (``hosted_vllm/``) for llama.cpp's server, which
    ignores ``max_completion_tokens``.
    """
    if not settings.llm_model:
        raise ConfigError("No LLM configured. Set CITEFINDER_LLM_MODEL (e.g. 'openai/gpt-4o-mini' or "
                          "'hosted_vllm/<alias>' with CITEFINDER_LLM_API_BASE) or pass --llm-model.")
    dspy = import_dspy()

    kwargs: dict[str, Any] = {
        "max_tokens": settings.llm_max_tokens,
        "timeout": settings.llm_timeout_s,
        "num_retries": settings.llm_retries,
        "temperature": settings.llm_temperature,
        "cache": False,
        **client_kwargs(settings),
    }
    kwargs.update(overrides)
    return dspy.LM(settings.llm_model, **kwargs)


def call_records(history: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One record per LM call: prompt size in characters and tokens when the server reported usage."""
    records = []
    for entry in history:
        messages = entry.get("messages") or []
        prompt_chars = sum(len(str(m.get("content") or "")) for m in messages if isinstance(m, dict))
        if not messages and entry.get("prompt"):
            prompt_chars = len(str(entry["prompt"]))
        record: dict[str, Any] = {"prompt_chars": prompt_chars}
        usage = entry.get("usage") or {}
        for key in ("prompt_tokens", "completion_tokens"):
            value = usage.get(key) if isinstance(usage, dict) else getattr(usage, key, None)
            if isinstance(value, int):
                record[key] = value
        records.append(record)
    return records


def call_totals(records: list[dict[str, Any]]) -> dict[str, int]:
    """Calls, prompt characters and, when every call reported them, prompt and completion tokens."""
    totals = {"llm_calls": len(records), "prompt_chars": sum(r["prompt_chars"] for r in records)}
    for key in ("prompt_tokens", "completion_tokens"):
        if records and all(key in r for r in records):
            totals[key] = sum(r[key] for r in records)
    return totals


def _chain(error: BaseException) -> list[BaseException]:
    """The error and its causes (DSPy wraps transport errors: a read timeout is the cause)."""
    seen: list[BaseException] = []
    current: BaseException | None = error
    while current is not None and current not in seen and len(seen) < 8:
        seen.append(current)
        current = current.__cause__ or current.__context__
    return seen


def describe_failure(error: BaseException, settings: "Settings") -> str:
    """A short reason for a failed LLM call: malformed answer, timeout, rate limit, HTTP error..."""
    chain = _chain(error)
    names = {cls.__name__ for e in chain for cls in type(e).__mro__}
    statuses = [s for e in chain for s in (getattr(e, "status", None), getattr(e, "status_code", None))
                if isinstance(s, int)]
    detail = " ".join(str(error).split())[:300]
    retried = f" after {settings.llm_retries} retr{'y' if settings.llm_retries == 1 else 'ies'} (setting llm_retries)"
    missing = [e for e in chain if isinstance(e, ImportError) and (e.name or "").split(".")[0] in LLM_PACKAGES]
    if missing or "ModelLoadError" in names:
        what = missing[0].name if missing else "DSPy"
        return f"LLM unavailable: {what} is not installed: {LLM_EXTRA}"
    if "AdapterParseError" in names:
        return f"malformed LLM answer (no parsable output fields): {detail}"
    if any("Timeout" in n and "Lock" not in n for n in names):
        return f"LLM call timed out after {settings.llm_timeout_s:g} s (setting llm_timeout_s): {detail}"
    if "LMRateLimitError" in names or "RateLimitError" in names or 429 in statuses:
        return f"LLM rate limited (HTTP 429){retried}"
    if statuses:
        transient = statuses[0] >= 500 or statuses[0] == 408
        return f"LLM endpoint answered HTTP {statuses[0]}{retried if transient else ''}: {detail}"
    if "LMTransportError" in names or "APIConnectionError" in names:
        return f"LLM endpoint unreachable{retried}: {detail}"
    return f"LLM call failed: {type(error).__name__}: {detail}"


def usage_summary(details: dict[str, Any]) -> str:
    """One line for a trace's LLM cost and mapping (select or rewrite ``details``); "" without LLM calls.

    e.g. ``program picker-….json · 1 LLM call · prompt 3,120 chars, 812 tokens · completion 64 tokens ·
    answer "2" -> [2] arxiv:1810.04805 by number``.
    """
    if "llm_calls" not in details:
        return ""
    calls = int(details["llm_calls"])
    parts = [f"program {details['program']}"] if details.get("program") else []
    parts.append(f"{calls} LLM call{'' if calls == 1 else 's'}")
    prompt = f"prompt {details.get('prompt_chars', 0):,} chars"
    if "prompt_tokens" in details:
        prompt += f", {details['prompt_tokens']:,} tokens"
    parts.append(prompt)
    if "completion_tokens" in details:
        parts.append(f"completion {details['completion_tokens']:,} tokens")
    pick = details.get("pick")
    if pick:
        raw = str(details.get("raw_answer", ""))[:40]
        parts.append(f"answer {raw!r} -> [{pick['number']}] {pick['doc_id']} by {pick['how']}")
    return " · ".join(parts)

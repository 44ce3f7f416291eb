""""Test connection" for the LLM endpoint: one tiny call, with a hard timeout, never dspy.configure."""

from __future__ import annotations

import concurrent.futures
import time

from citefinder.config import Settings
from citefinder.errors import ConfigError, LLMError

PROMPT = "Reply with the single word: pong"


def check_llm(settings: Settings, timeout_s: float = 20.0) -> tuple[str, float]:
    """Send one short prompt to the configured LLM (built like the selector's); return (answer, seconds).

    The LM is passed with ``dspy.context(lm=...)`` (safe from any thread). Raises ConfigError
    when no model is set and LLMError, with the provider's message, when the call fails or
    takes longer than ``timeout_s``.
    """
    if not settings.llm_model:
        raise ConfigError("No LLM model is set: fill in the model name (e.g. openai/gpt-4o-mini) first.")
    timeout_s = min(timeout_s, settings.llm_timeout_s)

    def call() -> str:
        import dspy

        from citefinder.llm.lm import make_lm

        lm = make_lm(settings, max_tokens=16, timeout=timeout_s, num_retries=0)
        with dspy.context(lm=lm):
            out = lm(PROMPT)
        return str(out[0] if isinstance(out, list) and out else out).strip()

    start = time.perf_counter()
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="llm-check")
    try:
        answer = pool.submit(call).result(timeout=timeout_s + 5)
    except concurrent.futures.TimeoutError as e:
        raise LLMError(
            f"No answer from {settings.llm_model} within {timeout_s:.0f} s. Check the API base "
            f"({settings.llm_api_base or 'provider default'}) and that the server is running."
        ) from e
    except Exception as e:  # noqa: BLE001 - every provider error becomes one readable message
        raise LLMError(_explain(settings, e)) from e
    finally:
        pool.shutdown(wait=False)
    return answer, time.perf_counter() - start


def _explain(settings: Settings, error: Exception) -> str:
    text = " ".join(str(error).split())
    if len(text) > 400:
        text = text[:400] + "..."
    where = settings.llm_api_base or "the provider's default endpoint"
    hint = ""
    low = text.lower()
    if "auth" in low or "api key" in low or "401" in low:
        hint = " Check the API key."
    elif "connect" in low or "refused" in low or "resolve" in low:
        hint = " Check the API base URL and that the server is running."
    elif "not found" in low or "404" in low or "provider" in low:
        hint = " Check the model name, in LiteLLM form (e.g. openai/gpt-4o-mini or hosted_vllm/<alias>)."
    return f"The LLM {settings.llm_model} at {where} failed: {type(error).__name__}: {text}.{hint}"

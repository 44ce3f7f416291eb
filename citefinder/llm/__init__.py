"""The DSPy LM built from the settings, its call accounting, and the signatures (prompts) the selector uses."""

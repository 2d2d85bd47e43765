"""Helpers every layer uses: short text, the optional extras, fast dataclass construction."""

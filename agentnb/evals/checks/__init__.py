"""How a case is judged: what every check sees and gives (``base``), the built-in checks users
reach as ``agentnb.evals.check`` (``builtin``), and judges that ask a model (``judge``)."""

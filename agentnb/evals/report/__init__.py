"""An evaluation's results: a row per (case, repeat) (``case_row``), the run with its numbers,
frames and static record (``eval_run``), two runs case by case (``eval_comparison``), and a
stored run read back (``load``)."""

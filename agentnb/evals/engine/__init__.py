"""What runs an evaluation's cases: the per-model in-flight limit and retries (``limiter``), one
case on a fresh agent (``worker``), the judges' model calls (``judge_calls``), the budget plan
(``plan``), the progress counts (``progress``) and the folder beside the notebook (``store``)."""

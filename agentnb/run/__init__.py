"""One run of an agent: Observe (what the model will receive), the prompt and its tokens, the
Observe → Think → Act loop, the tool executor, and what a run hands back."""

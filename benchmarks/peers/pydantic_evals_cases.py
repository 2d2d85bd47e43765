"""The evaluation benchmark's cases through pydantic-evals (runs in its own venv; prints one JSON line).

    PY benchmarks/peers/pydantic_evals_cases.py URL CASES CONCURRENCY [stream|json]

The task calls the same loopback server with the ``openai`` async client (streaming or not, as
agentnb's model in the same run); one ``Contains`` evaluator, as agentnb's ``answer_contains``.
"""

from __future__ import annotations

import json
import sys
import time


def main() -> None:
    url, cases, concurrency = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    streaming = sys.argv[4:] == ["stream"]
    import openai
    from pydantic_evals import Case, Dataset
    from pydantic_evals.evaluators import Contains

    client = openai.AsyncOpenAI(base_url=url, api_key="x", max_retries=0)

    async def task(question: str) -> str:
        if not streaming:
            answer = await client.chat.completions.create(
                model="gpt-bench",
                messages=[
                    {"role": "system", "content": "Answer briefly."},
                    {"role": "user", "content": question},
                ],
            )
            return answer.choices[0].message.content or ""
        stream = await client.chat.completions.create(
            model="gpt-bench",
            messages=[
                {"role": "system", "content": "Answer briefly."},
                {"role": "user", "content": question},
            ],
            stream=True,
            stream_options={"include_usage": True},
        )
        return "".join([c.choices[0].delta.content or "" async for c in stream if c.choices])

    def dataset(n: int) -> Dataset:
        return Dataset(
            name="bench",
            cases=[Case(name=f"q{i:04d}", inputs=f"question {i}", expected_output="ok") for i in range(n)],
            evaluators=[Contains(value="ok")],
        )

    dataset(50).evaluate_sync(task, max_concurrency=concurrency, progress=False)  # warm-up
    start = time.perf_counter()
    report = dataset(cases).evaluate_sync(task, max_concurrency=concurrency, progress=False)
    wall = time.perf_counter() - start
    passed = sum(all(a.value for a in c.assertions.values()) for c in report.cases)
    print(
        json.dumps(
            {
                "wall_s": wall,
                "rows": len(report.cases),
                "errors": len(report.failures),
                "rate": passed / cases,
            }
        )
    )


if __name__ == "__main__":
    main()

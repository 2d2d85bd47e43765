"""``%%chat`` in a real kernel shows the typed output while it streams: the live area's updates
carry the answer so far (the output tool's arguments from a loopback server, through the real
``openai`` client), growing, escaped as text; the cell keeps only the static record."""

from __future__ import annotations

import json
from typing import Any

import pytest
from openai_server import OpenAIServer, Reply

INVOICE = {"vendor": "<b>ACME</b> GmbH", "total": 1250.75, "note": "paid in full, thank you"}


def execute(client: Any, code: str) -> list[dict[str, Any]]:
    """Run ``code`` in the kernel; the IOPub messages it caused (raising on an error)."""
    msg_id = client.execute(code)
    seen = []
    while True:
        msg = client.get_iopub_msg(timeout=60)
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        seen.append(msg)
        if msg["msg_type"] == "error":
            raise AssertionError("\n".join(msg["content"]["traceback"]))
        if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
            return seen


@pytest.fixture
def kernel():
    from jupyter_client.manager import start_new_kernel

    manager, client = start_new_kernel(kernel_name="python3")
    try:
        yield client
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


def test_chat_shows_the_typed_output_so_far_while_the_output_tools_arguments_stream(kernel):
    with OpenAIServer() as server:
        server.add(Reply(tool_calls=[("final_result", INVOICE)], pieces=14))
        execute(kernel, "%load_ext agentnb")
        execute(
            kernel,
            "from pydantic import BaseModel\n"
            "from agentnb.models import OpenAIChat\n"
            "class Invoice(BaseModel):\n    vendor: str\n    total: float\n    note: str\n"
            f"model = OpenAIChat('gpt-test', base_url={server.url!r}, api_key='sk-loopback', max_retries=0)",
        )
        execute(
            kernel, "%%agent inv --model model --no-session --output Invoice --output-mode tool\nRead it."
        )
        shown = execute(kernel, "%%chat inv\nInvoice from ACME, 1,250.75 EUR.")
        outcome = execute(kernel, "print(inv.history[-1].status, inv.history[-1].output.total)")
    updates = [  # the live area's (the inspector's output has updates of its own)
        m["content"]["data"]
        for m in shown
        if m["msg_type"] == "update_display_data"
        and not m["content"]["transient"]["display_id"].startswith("agentnb-inspector-")
    ]
    partial = [
        u["text/plain"].rpartition("\n")[2] for u in updates if "output so far (Invoice)" in u["text/plain"]
    ]
    assert len(partial) >= 4, [u["text/plain"] for u in updates]
    shown_data = [json.loads(line.partition(": ")[2]) for line in partial]
    vendors = [d.get("vendor", "") for d in shown_data]
    assert vendors == sorted(vendors, key=len) and any(0 < len(v) < len(INVOICE["vendor"]) for v in vendors)
    assert all(INVOICE["note"].startswith(d.get("note", "")) for d in shown_data)
    whole = [u for u in updates if "output (Invoice): " in u["text/plain"]]
    assert whole and json.loads(whole[-1]["text/plain"].rpartition("output (Invoice): ")[2]) == INVOICE
    # As text: the model's markup is escaped in the HTML form, never live.
    html = [u["text/html"] for u in updates if "output so far" in u.get("text/html", "")]
    assert html and all("<b>ACME" not in h for h in html) and any("&lt;b&gt;ACME" in h for h in html)
    assert updates[-1]["text/plain"] == ""  # the live area ends empty; the record is the cell's output
    record = [m for m in shown if m["msg_type"] == "display_data"][-1]["content"]["data"]["text/plain"]
    assert "output: Invoice · tool · 1 attempt" in record and "output so far" not in record
    printed = "".join(m["content"]["text"] for m in outcome if m["msg_type"] == "stream")
    assert printed.strip() == "ok 1250.75"
    assert server.problems == []

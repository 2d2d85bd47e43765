"""Finding a model's credentials in its configuration and redacting them from text, data and streams."""

from __future__ import annotations

import base64

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentnb.models.credentials import (
    REDACTED,
    Redactor,
    header_secrets,
    query_secrets,
    redact_url,
    url_secrets,
)

KEY = "sk-live-0123456789abcdef"


def test_auth_headers_give_their_value_and_their_token():
    found = header_secrets(
        {
            "Authorization": f"Bearer {KEY}",
            "X-Api-Key": "hdr-9876543210",
            "User-Agent": "curl/8.0",
            "OpenAI-Beta": "assistants=v2",
        }
    )
    assert found == [f"Bearer {KEY}", KEY, "hdr-9876543210"]
    assert header_secrets(None) == [] and header_secrets(["Authorization"]) == []


def test_query_and_url_secrets():
    assert query_secrets({"api-key": "q-secret-value", "api-version": "2024-10-01"}) == [
        "q-secret-value",
        "q-secret-value",
    ]
    found = url_secrets("https://alice:p%40ss-word-1@host.example/v1?key=k-123456789&region=eu")
    assert "p@ss-word-1" in found and "p%40ss-word-1" in found and "k-123456789" in found
    assert base64.b64encode(b"alice:p@ss-word-1").decode() in found  # what HTTP Basic sends
    assert url_secrets("http://127.0.0.1:8000/v1") == [] and url_secrets(None) == []


def test_redacted_urls_keep_what_helps_and_drop_what_is_secret():
    shown = redact_url("https://alice:pw-12345678@host.example:8443/v1?key=k-123456789&region=eu")
    assert shown == f"https://{REDACTED}@host.example:8443/v1?key={REDACTED}&region=eu"
    assert redact_url("http://127.0.0.1:8000/v1") == "http://127.0.0.1:8000/v1"


def test_text_and_data_are_redacted_everywhere_but_short_values_are_left_alone():
    redactor = Redactor([KEY, f"Bearer {KEY}", "short"])
    assert redactor.text(f"auth: Bearer {KEY}!") == f"auth: {REDACTED}!"
    data = {"headers": {"Authorization": f"Bearer {KEY}"}, KEY: [KEY, 3, None], "short": "short"}
    assert redactor.data(data) == {
        "headers": {"Authorization": REDACTED},
        REDACTED: [REDACTED, 3, None],
        "short": "short",
    }
    assert data["headers"]["Authorization"] == f"Bearer {KEY}"  # a copy: the original is untouched
    assert not Redactor(["short", None, 5]) and Redactor([]).data(data) is data


@settings(max_examples=200, deadline=None, database=None)
@given(
    before=st.text(max_size=20),
    after=st.text(max_size=20),
    cuts=st.lists(st.integers(0, 80), max_size=8),
)
def test_a_secret_split_across_streamed_deltas_is_never_shown(before, after, cuts):
    text = f"{before}{KEY}{after}{KEY[:10]}"
    redactor = Redactor([KEY])
    stream = redactor.deltas()
    pieces, last = [], 0
    for cut in sorted(set(c for c in cuts if c < len(text))) + [len(text)]:
        pieces.append(stream.feed(text[last:cut]))
        last = cut
    pieces.append(stream.flush())
    shown = "".join(pieces)
    assert shown == redactor.text(text)
    assert KEY not in shown


def test_streamed_text_is_held_back_only_where_a_secret_may_begin():
    stream = Redactor([KEY]).deltas()
    assert stream.feed("Hello, ") == "Hello, "  # nothing that could start the key: shown at once
    assert stream.feed("here: sk-li") == "here: "
    assert stream.feed("ve-0123456789abcdef and more") == f"{REDACTED} and more"
    assert stream.feed(" sk") == " " and stream.flush() == "sk"


def test_a_model_leaves_the_process_without_its_key_and_a_copy_shares_no_client() -> None:
    """``without_credentials`` and ``copy`` are the model interface for what evaluation used to do
    by editing private fields: the key stays here, a copy makes its own client."""
    from agentnb import ScriptedModel
    from agentnb.errors import ConfigurationError
    from agentnb.models import OpenAIChat

    model = OpenAIChat("gpt-5-mini", api_key="sk-test-not-real", base_url="http://127.0.0.1:9/v1")
    client = model.client()
    shipped = model.without_credentials()
    assert shipped is not model and shipped.offline_reason() is None  # base_url needs no key
    assert "sk-test-not-real" not in repr(vars(shipped))
    assert model.client() is client  # the original keeps its key and its client
    quiet = model.copy(max_retries=0)
    assert quiet.max_retries == 0 and model.max_retries is None
    assert quiet.client() is not client and quiet.client().max_retries == 0
    scripted = ScriptedModel(["hi"])
    assert scripted.without_credentials() is scripted
    with pytest.raises(ConfigurationError, match=r"no setting named '_api_key'"):
        model.copy(_api_key="x")
    with pytest.raises(ConfigurationError, match=r"no setting named 'temprature'"):
        model.copy(temprature=0.2)

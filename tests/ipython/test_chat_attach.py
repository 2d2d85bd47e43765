"""``%%chat`` with images and files, through a real IPython shell: ``--attach NAME`` (a variable
or a path) and ``{name}`` in the cell body; what cannot be attached is a one-line UsageError."""

from __future__ import annotations

import pytest
from IPython.core.error import UsageError
from IPython.utils.capture import capture_output

from agentnb.messages import FilePart, ImagePart, TextPart
from agentnb.messages.png import encode_png

PNG = encode_png(bytes(range(12)), 2, 2, 3)


@pytest.fixture()
def shell(shell):
    """The shared shell (tests/conftest.py) with an agent ``bot`` and a picture ``chart``."""
    shell.run_cell(
        "from agentnb import Agent, ScriptedModel\nbot = Agent('bot', ScriptedModel(['seen'] * 5))"
    )
    shell.user_ns["chart"] = ImagePart(PNG, name="chart")
    return shell


def chat(ip, line: str, body: str) -> None:
    with capture_output():
        ip.run_cell_magic("chat", line, body)


def user_content(ip):
    return ip.user_ns["bot"].model.requests[-1].last_user_parts


def test_attach_takes_variables_and_paths_in_order(shell, tmp_path) -> None:
    (tmp_path / "report.pdf").write_bytes(b"%PDF-1.4\n%%EOF\n")
    chat(shell, "bot --attach chart --attach report.pdf", "What do these show?")
    text, image, pdf = user_content(shell)
    assert text == TextPart("What do these show?")
    assert image.data == PNG and image.name == "chart"
    assert isinstance(pdf, FilePart) and pdf.name == "report.pdf"
    assert shell.user_ns["bot"].history[-1].message == "What do these show?"


def test_a_placeholder_naming_an_image_puts_it_there(shell) -> None:
    shell.user_ns["city"] = "Oslo"
    chat(shell, "bot", "Before {chart} after, in {city} and {missing}.")
    before, image, after = user_content(shell)
    assert (before, after) == (TextPart("Before"), TextPart("after, in {city} and {missing}."))
    assert image.data == PNG


def test_a_cell_with_nothing_attached_is_sent_as_text(shell) -> None:
    chat(shell, "bot", "just {text}")
    assert shell.user_ns["bot"].model.requests[-1].messages[-1]["content"] == "just {text}"


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("bot --attach nothing_here", "--attach nothing_here: no variable and no file of that name"),
        ("bot --attach number", "--attach number: cannot send a builtins.int to a model"),
    ],
)
def test_what_cannot_be_attached_is_a_one_line_usage_error(shell, line, expected) -> None:
    shell.user_ns["number"] = 3
    with pytest.raises(UsageError) as info:
        chat(shell, line, "look")
    assert expected in str(info.value) and "\n" not in str(info.value)
    assert shell.user_ns["bot"].model.requests == []

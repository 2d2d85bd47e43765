"""How long this process keeps the bytes of images and files (``MemoryBlobs``, ``PROCESS_BLOBS``):
while a part, a loaded turn, a session or an evaluation holds them, and then among a bounded
number of spare bytes, the least recently used dropped first; never a blob something alive
holds."""

from __future__ import annotations

import gc
import threading

import pytest

from agentnb import Agent, ScriptedModel
from agentnb.errors import MissingBlobError
from agentnb.ipython.images import find_bytes
from agentnb.messages import PROCESS_BLOBS, ImagePart, MemoryBlobs, Message, sha256_of
from agentnb.messages.blobs import SPARE_BYTES
from agentnb.sessions import JSONSession, MemorySession, SQLiteSession

MB = 1_000_000
PNG_HEAD = b"\x89PNG\r\n\x1a\n"


def big_png(n: int, size: int = MB) -> bytes:
    """An image of ``size`` bytes, different for each ``n`` (a PNG by its signature)."""
    return PNG_HEAD + n.to_bytes(4, "big") + bytes(size - len(PNG_HEAD) - 4)


class Holder:
    """Something that holds blobs (anything that takes weak references)."""


def test_a_held_blob_stays_and_a_spare_one_is_dropped_least_recently_used_first():
    store = MemoryBlobs("test", spare_bytes=3 * 100)
    blobs = [bytes([n]) * 100 for n in range(6)]
    holder = Holder()
    held = store.put(blobs[0], "image/png", holder=holder)
    spare = [store.put(data, "image/png") for data in blobs[1:4]]
    assert store.nbytes == 400 and store.spare_nbytes == 300
    store.get(spare[0])  # used again: now the most recently used
    store.put(blobs[4], "image/png")  # one spare too many: the least recently used goes
    assert spare[1] not in store and spare[0] in store and spare[2] in store
    assert store.nbytes == 400 and store.spare_nbytes == 300
    with pytest.raises(MissingBlobError, match=spare[1]):
        store.get(spare[1])
    for n in range(5, 30):  # many more spare blobs: the held one is never dropped
        store.put(bytes([n]) * 100, "image/png")
    assert store.get(held) == blobs[0] and store.spare_nbytes == 300
    del holder
    gc.collect()
    assert store.nbytes == store.spare_nbytes == 300  # spare now, the most recent: an older one went
    assert store.get(held) == blobs[0]


def test_a_blob_held_twice_stays_until_its_last_holder_is_gone():
    store = MemoryBlobs("test", spare_bytes=0)
    first, second = Holder(), Holder()
    sha = store.put(b"x" * 50, "text/plain", holder=first)
    assert store.hold(sha, second) and store.hold(sha, second)  # (holding twice is holding)
    del first
    gc.collect()
    assert store.get(sha) == b"x" * 50
    del second
    gc.collect()
    assert sha not in store and store.nbytes == 0
    assert not store.hold(sha, Holder())  # gone: nothing to hold


def test_a_part_holds_its_own_bytes_and_a_message_stored_by_hand_loads_back_while_it_lives():
    store = MemoryBlobs("test", spare_bytes=0)
    image = ImagePart(big_png(1, 1000))
    stored = Message.user(["look", image]).to_dict(store)
    assert store.get(image.sha256) is image.data  # the part's own bytes: kept at no cost
    loaded = Message.from_dict(stored, store)
    del image
    gc.collect()
    assert Message.from_dict(stored, store) == loaded  # the loaded part holds them now
    del loaded
    gc.collect()
    with pytest.raises(MissingBlobError, match="nothing has held it since"):
        Message.from_dict(stored, store)


def test_holders_dying_in_other_threads_never_drop_a_held_blob():
    store = MemoryBlobs("test", spare_bytes=2_000)
    keeper = Holder()
    kept = store.put(b"k" * 500, "text/plain", holder=keeper)
    errors: list[BaseException] = []

    def churn(seed: int) -> None:
        try:
            for n in range(300):
                holder = Holder()
                sha = store.put(bytes([seed, n % 256]) * 250, "text/plain", holder=holder)
                assert store.get(sha)
                del holder  # its callback may run while another thread holds the store's lock
                assert store.get(kept) == b"k" * 500
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=churn, args=(seed,)) for seed in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    gc.collect()
    assert errors == []
    assert store.spare_nbytes <= 2_000 and store.get(kept) == b"k" * 500
    assert store.nbytes == 500 + store.spare_nbytes


def held() -> int:
    """The bytes of the blobs something in this process holds."""
    gc.collect()
    return PROCESS_BLOBS.nbytes - PROCESS_BLOBS.spare_nbytes


def test_a_kernel_that_sent_200_images_keeps_only_what_its_live_agents_still_show(tmp_path):
    start = held()
    plain = Agent("plain", ScriptedModel(lambda request: "seen"))
    plain.run(["no session stores nothing here", big_png(999)])
    assert held() == start and big_png(999) not in PROCESS_BLOBS

    session = JSONSession(tmp_path)
    sender = Agent("shop", ScriptedModel(lambda request: "seen"), session=session)
    images = {}
    for n in range(200):
        png = big_png(n)
        images[n] = sha256_of(png)
        sender.run([f"What changed in chart {n}?", png])
    session.flush()  # (a background compaction holds the session, and so its last turn)
    peak = held() - start
    assert peak >= 200 * MB  # every turn holds its image while the agent lives

    # A second kernel's view of the notebook: the session loaded, its turns decoded when read.
    reading = JSONSession(tmp_path)
    reader = Agent("shop", ScriptedModel(lambda request: "seen"), session=reading)
    del sender, session
    gc.collect()
    for n in range(100):  # other images come and go meanwhile: spare ones are dropped
        ImagePart(big_png(1000 + n)).to_dict()
    gc.collect()
    assert find_bytes(reader, images[0], 0) == big_png(0)  # the inspector's thumbnail, from memory
    assert find_bytes(reader, images[199]) == big_png(199)
    last = next(m for m in reader.history[150].messages if m.role == "user")
    assert last.content[1].data == big_png(150)
    assert held() - start == 200 * MB  # what the reader holds, once each
    assert PROCESS_BLOBS.spare_nbytes <= SPARE_BYTES

    reading.flush()
    del reader, reading, last
    after = held() - start
    print(f"process blobs held: {peak / MB:.0f} MB while sending, {after / MB:.0f} MB after the agents went")
    assert after == 0
    assert PROCESS_BLOBS.nbytes <= start + SPARE_BYTES


@pytest.mark.parametrize("kind", ["sqlite", "memory"])
def test_a_session_s_blobs_go_with_the_last_agent_and_session_holding_them(tmp_path, kind):
    start = held()
    session = SQLiteSession(tmp_path / "s.db") if kind == "sqlite" else MemorySession()
    agent = Agent("shop", ScriptedModel(lambda request: "seen"), session=session)
    for n in range(100):
        agent.run([f"chart {n}", big_png(2000 + n)])
    session.flush()
    del agent
    gc.collect()
    if kind == "memory":  # the session in memory is where they are: it holds them all
        assert held() - start == 100 * MB
        again = Agent("shop", ScriptedModel(["ok"]))
        session.load_session_state_sync("shop", agent=again)
        assert next(m for m in again.history[99].messages if m.role == "user").content[1].data == big_png(
            2099
        )
        del again
    del session
    assert held() == start and PROCESS_BLOBS.nbytes <= start + SPARE_BYTES

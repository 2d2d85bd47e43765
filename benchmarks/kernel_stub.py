"""A kernel without a front end, so widget messages take ipykernel's real send path.

``install()`` creates the ``ipykernel`` ``Kernel`` singleton with a real ``jupyter_client``
``Session`` (HMAC signing, ``json_packer``) and, as its IOPub socket, an object that only counts
the frames it is given. A widget's ``send`` then goes exactly as in a notebook: ipywidgets wraps
the content, ipykernel's ``Comm.publish_msg`` runs ``json_clean`` and ``Session.send``, which
builds the message (header, parent header of the cell, metadata), serialises and signs it. Only
the ZeroMQ transport is missing: the bytes are counted instead of sent.
"""

from __future__ import annotations

from typing import Any


class CountingSocket:
    """Stands in for the IOPub socket: counts messages and the bytes of their frames."""

    def __init__(self) -> None:
        self.messages = 0
        self.bytes = 0

    def send_multipart(self, parts: list[Any], copy: bool = True, **_: Any) -> None:
        self.messages += 1
        self.bytes += sum(len(p) for p in parts)

    def reset(self) -> None:
        self.messages = self.bytes = 0


def install(cell: str = "%%chat bench\nplease add some items") -> CountingSocket:
    """Make widgets created from now on send through a kernel session; returns the counter.

    ``cell`` is the source of the execute request the messages answer (their parent header)."""
    import ipykernel.ipkernel  # noqa: F401  (installs ipykernel's comm factory, as a kernel does)
    from ipykernel.kernelbase import Kernel
    from jupyter_client.session import Session

    socket = CountingSocket()
    session = Session(key=b"agentnb-benchmark-key-0123456789", username="bench")
    kernel = Kernel.instance(session=session, iopub_socket=socket)
    parent = session.msg("execute_request", content={"code": cell, "silent": False, "store_history": True})
    kernel.set_parent([b"bench"], parent, channel="shell")
    return socket


def shell() -> object:
    """An IPython shell of that kernel (call ``install`` first): ``display`` and
    ``update_display`` go out through the kernel's session as in a notebook."""
    from ipykernel.kernelbase import Kernel
    from ipykernel.zmqshell import ZMQInteractiveShell
    from traitlets.config import Config

    kernel = Kernel.instance()
    config = Config()
    config.HistoryManager.enabled = False  # no history database
    ip = ZMQInteractiveShell.instance(config=config, kernel=kernel)
    ip.display_pub.session = kernel.session
    ip.display_pub.pub_socket = kernel.iopub_socket
    ip.display_pub.set_parent(kernel.get_parent())
    return ip

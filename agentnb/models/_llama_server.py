"""Run llama.cpp's OpenAI-compatible server (from the ``xllamacpp`` wheel) until killed.

Started by ``agentnb.models.local`` as ``python _llama_server.py MODEL PORT [TEMPLATE] [N_CTX]``.
It is a separate process so a crash in native code cannot take the kernel with it, and so the
server's threads never compete with the notebook's own.
"""

from __future__ import annotations

import sys
import threading


def main(argv: list[str]) -> None:
    import xllamacpp

    model_path, port = argv[0], int(argv[1])
    template = argv[2] if len(argv) > 2 and argv[2] else None
    n_ctx = int(argv[3]) if len(argv) > 3 else 2048
    params = xllamacpp.CommonParams()
    params.model.path = model_path
    params.n_ctx = n_ctx
    params.n_parallel = 1
    params.use_jinja = True
    if template:
        with open(template, encoding="utf-8") as fh:
            params.chat_template = fh.read()
    threads = int(argv[4]) if len(argv) > 4 else 1
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    params.port = port
    server = xllamacpp.Server(params)  # listens on 127.0.0.1:port until this process ends
    # Exit with the parent: the parent holds our stdin open and closes it (or dies).
    sys.stdin.read()
    del server


if __name__ == "__main__":
    threading.current_thread().name = "agentnb-llama-server"
    main(sys.argv[1:])

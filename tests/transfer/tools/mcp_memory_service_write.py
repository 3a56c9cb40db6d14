"""Run by tests/transfer/test_mcp_memory_service_real_file.py in mcp-memory-service's own virtualenv:
store memories with its own sqlite-vec storage (its ONNX embedder), delete one, as a user of it would.

    python mcp_memory_service_write.py DATABASE NOTES_JSON   (NOTES_JSON: [[content, tags, type, metadata], ...];
                                                                  the last one is deleted)
"""

from __future__ import annotations

import asyncio
import json
import sys

from mcp_memory_service.models.memory import Memory
from mcp_memory_service.storage.sqlite_vec import SqliteVecMemoryStorage
from mcp_memory_service.utils.hashing import generate_content_hash


async def write(path: str, notes: list[list[object]]) -> None:
    storage = SqliteVecMemoryStorage(path)
    await storage.initialize()
    hashes = []
    for content, tags, kind, metadata in notes:
        content_hash = generate_content_hash(content)
        memory = Memory(content=content, content_hash=content_hash, tags=tags, memory_type=kind, metadata=metadata)
        stored, message = await storage.store(memory)
        if not stored:
            raise SystemExit(f"mcp-memory-service did not store {content!r}: {message}")
        hashes.append(content_hash)
    deleted, message = await storage.delete(hashes[-1])
    if not deleted:
        raise SystemExit(f"mcp-memory-service did not delete: {message}")


if __name__ == "__main__":
    asyncio.run(write(sys.argv[1], json.loads(sys.argv[2])))

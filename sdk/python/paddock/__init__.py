"""paddock: the Python SDK of paddock's API.

    from paddock import Paddock
    p = Paddock(url, api_key)
    rt = p.create_project(org, ws, "demo")
    p.start_runtime(org, ws, rt.runtime_id)
    r = p.exec(org, ws, rt.runtime_id, ["echo", "hello"])
    print(r.stdout)

Paddock is the synchronous client, AsyncPaddock the asyncio one; both have
the same methods. Answers are the typed models of paddock.models, generated
from the API's OpenAPI document; a refused call raises PaddockError.
"""

from . import models
from .aio import AsyncPaddock
from .client import Paddock
from .streams import AsyncExecStream, AsyncFileStream, AsyncSessionStream, ExecStream, FileStream, SessionStream
from .errors import PaddockError

__version__ = "0.1.0"

__all__ = [
    "AsyncExecStream",
    "AsyncFileStream",
    "AsyncPaddock",
    "AsyncSessionStream",
    "ExecStream",
    "FileStream",
    "Paddock",
    "PaddockError",
    "SessionStream",
    "models",
]

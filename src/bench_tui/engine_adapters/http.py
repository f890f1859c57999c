"""Control-plane HTTP (stdlib only): health, model list, metrics, tokenize, cache resets.

Measuring never goes through here (that is runner/transport/client.py); these calls are rare and small.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any


class HttpError(OSError):
    def __init__(self, status: int, body: str, url: str) -> None:
        self.status = status
        self.body = body
        super().__init__(f"HTTP {status} from {url}: {body[:300]}")


def request(
    method: str, url: str, *, body: Any = None, headers: dict[str, str] | None = None, timeout: float = 5.0
) -> tuple[int, bytes]:
    """(status, body) for 2xx; raises HttpError for other statuses and OSError for connection problems."""
    data = None
    hdrs = dict(headers or {})
    if body is not None:
        data = json.dumps(body).encode()
        hdrs.setdefault("content-type", "application/json")
    req = urllib.request.Request(url, data=data, method=method, headers=hdrs)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return int(resp.status), bytes(resp.read())
    except urllib.error.HTTPError as exc:
        try:
            text = exc.read().decode("utf-8", "replace")
        except OSError:
            text = ""
        raise HttpError(exc.code, text, url) from None
    except urllib.error.URLError as exc:
        reason = exc.reason
        if isinstance(reason, OSError):
            raise reason from None
        raise OSError(str(reason)) from None


def get_json(url: str, *, headers: dict[str, str] | None = None, timeout: float = 5.0) -> Any:
    return json.loads(request("GET", url, headers=headers, timeout=timeout)[1])


def post_json(url: str, body: Any, *, headers: dict[str, str] | None = None, timeout: float = 5.0) -> Any:
    raw = request("POST", url, body=body, headers=headers, timeout=timeout)[1]
    return json.loads(raw) if raw.strip() else None


def get_text(url: str, *, headers: dict[str, str] | None = None, timeout: float = 5.0) -> str:
    return request("GET", url, headers=headers, timeout=timeout)[1].decode("utf-8", "replace")


def model_ids(payload: Any) -> list[str]:
    """Model ids from an OpenAI ``/v1/models`` answer (``data[].id``; llama.cpp's ``models[].name`` too)."""
    ids: list[str] = []
    if isinstance(payload, dict):
        for item in payload.get("data") or []:
            if isinstance(item, dict) and isinstance(item.get("id"), str):
                ids.append(item["id"])
        if not ids:
            for item in payload.get("models") or []:
                if isinstance(item, dict):
                    name = item.get("model") or item.get("name")
                    if isinstance(name, str):
                        ids.append(name)
    return ids

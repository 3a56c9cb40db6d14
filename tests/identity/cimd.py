"""Client ID Metadata Documents on loopback, for the tests: a TLS server serving a host's metadata,
and a fetcher the live server uses to read it (the shipped fetcher refuses loopback, as it should)."""

from __future__ import annotations

import datetime
import ipaddress
import json
import os
import ssl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import requests
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from oauth2_provider.cimd import CIMDError, SafeMetadataFetcher

CA_VARIABLE = "CIMD_TEST_CA"


class LoopbackFetcher(SafeMetadataFetcher):
    """Reads an https client-id document on this machine, trusting the test server's certificate only."""

    def fetch(self, client_id: str) -> tuple[dict[str, Any], int]:
        if not client_id.startswith("https://127.0.0.1:"):
            raise CIMDError("only the test's loopback documents are fetched here")
        response = requests.get(client_id, verify=os.environ[CA_VARIABLE], allow_redirects=False, timeout=5)
        if response.status_code != 200 or not response.headers.get("Content-Type", "").startswith("application/json"):
            raise CIMDError(f"client_id document returned HTTP {response.status_code}")
        return dict(response.json()), 300


def _certificate(directory: Path) -> tuple[Path, Path]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / "cimd-cert.pem", directory / "cimd-key.pem"
    cert_path.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return cert_path, key_path


@contextmanager
def metadata_server(directory: Path, metadata: dict[str, Any]) -> Iterator[tuple[str, Path]]:
    """(the https URL of ``metadata`` as a client-id document, the certificate to trust)."""
    cert_path, key_path = _certificate(directory)
    documents: dict[str, bytes] = {}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = documents.get(self.path)
            self.send_response(200 if body else 404)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body or b"")))
            self.end_headers()
            self.wfile.write(body or b"")

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert_path, key_path)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    url = f"https://127.0.0.1:{server.server_address[1]}/host/client.json"
    documents["/host/client.json"] = json.dumps({**metadata, "client_id": url}).encode()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield url, cert_path
    finally:
        server.shutdown()

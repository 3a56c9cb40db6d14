// An MCP host on the official TypeScript SDK: it connects to MCP_URL in MODE ("auto": 2026-07-28
// first; "legacy": the initialize handshake), signs in with OAuth when the server says 401, and
// calls platform-status. The person's browser is the test: this host prints the authorization URL
// ({"authorize": url}) and reads back, on stdin, the query its redirect URI received.
// Usage: node host.mjs MCP_URL MODE
import readline from "node:readline";
import { Client, StreamableHTTPClientTransport, UnauthorizedError } from "@modelcontextprotocol/client";

const [mcpUrl, mode] = process.argv.slice(2);
const redirectUrl = "http://127.0.0.1:8123/callback";
const lines = readline.createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const stored = {};

const provider = {
  get redirectUrl() {
    return redirectUrl;
  },
  get clientMetadata() {
    return {
      client_name: "TypeScript Host",
      redirect_uris: [redirectUrl],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  },
  clientInformation: () => stored.client,
  saveClientInformation: (client) => {
    stored.client = client;
  },
  tokens: () => stored.tokens,
  saveTokens: (tokens) => {
    stored.tokens = tokens;
  },
  redirectToAuthorization: (url) => {
    console.log(JSON.stringify({ authorize: url.toString() }));
  },
  saveCodeVerifier: (verifier) => {
    stored.verifier = verifier;
  },
  codeVerifier: () => stored.verifier,
};

async function connect() {
  const client = new Client({ name: "ts-host", version: "1.0.0" }, { versionNegotiation: { mode } });
  const transport = new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: provider });
  await client.connect(transport);
  return client;
}

let client;
try {
  client = await connect();
} catch (error) {
  if (!(error instanceof UnauthorizedError)) throw error;
  const { value } = await lines.next();
  const transport = new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: provider });
  await transport.finishAuth(new URLSearchParams(value));
  client = await connect();
}
const result = await client.callTool({ name: "platform-status", arguments: {} });
console.log(
  JSON.stringify({ status: JSON.parse(result.content[0].text), protocolVersion: client.getNegotiatedProtocolVersion() }),
);
await client.close();
process.exit(0);

// An MCP host on the official TypeScript SDK: it connects to MCP_URL in MODE ("auto": 2026-07-28
// first; "legacy": the initialize handshake), signing in with OAuth when the server says 401, and
// then calls platform-status each time it reads "call" on stdin. The person's browser is the test:
// the host prints the authorization URL ({"authorize": url}) and reads back, on stdin, the query
// its redirect URI received. With CLIENT_METADATA_URL it is known by that client-id metadata
// document (CIMD) instead of registering.
// Usage: node host.mjs MCP_URL MODE [CLIENT_METADATA_URL]
import readline from "node:readline";
import { Client, StreamableHTTPClientTransport, UnauthorizedError } from "@modelcontextprotocol/client";

const [mcpUrl, mode, clientMetadataUrl] = process.argv.slice(2);
const redirectUrl = "http://127.0.0.1:8123/callback";
const lines = readline.createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const stored = {};
const say = (message) => console.log(JSON.stringify(message));

const provider = {
  clientMetadataUrl,
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
    stored.saved = (stored.saved || 0) + 1;
  },
  redirectToAuthorization: (url) => say({ authorize: url.toString() }),
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

async function signedIn() {
  try {
    return await connect();
  } catch (error) {
    if (!(error instanceof UnauthorizedError)) throw error;
    const { value } = await lines.next();
    const transport = new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: provider });
    await transport.finishAuth(new URLSearchParams(value));
    return connect();
  }
}

const client = await signedIn();
say({ protocolVersion: client.getNegotiatedProtocolVersion(), clientId: stored.client?.client_id });
for await (const command of lines) {
  if (command !== "call") break;
  try {
    const result = await client.callTool({ name: "platform-status", arguments: {} });
    say({ status: JSON.parse(result.content[0].text), tokensSaved: stored.saved });
  } catch (error) {
    say({ error: String(error), tokensSaved: stored.saved });
  }
}
await client.close();
process.exit(0);

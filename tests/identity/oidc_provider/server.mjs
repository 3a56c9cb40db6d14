// An OpenID Connect provider for the single sign-on tests: `oidc-provider` (an independent,
// certified implementation) with its development login page, which accepts any login name.
// Usage: node server.mjs PORT CLIENT_ID CLIENT_SECRET REDIRECT_URI ACCOUNTS_JSON
// ACCOUNTS_JSON maps a login name to {email, groups, organization}; it is read again at every sign-in,
// so a test can change a person's groups between two sign-ins.
// It also serves MCP hosts as an organization's authorization server would: hosts register themselves
// (dynamic client registration), and access tokens requested for a resource (RFC 8707) are JWTs
// for that audience, naming the person (preferred_username) and their organization.
import fs from "node:fs";
import Provider from "oidc-provider";

const [port, clientId, clientSecret, redirectUri, accountsFile] = process.argv.slice(2);

function person(id) {
  return JSON.parse(fs.readFileSync(accountsFile, "utf8"))[id] || {};
}

function account(id) {
  return { sub: id, preferred_username: id, email: person(id).email || `${id}@example.test`, groups: person(id).groups || [] };
}

const provider = new Provider(`http://127.0.0.1:${port}`, {
  clients: [
    {
      client_id: clientId,
      client_secret: clientSecret,
      redirect_uris: [redirectUri],
      response_types: ["code"],
      grant_types: ["authorization_code"],
    },
  ],
  claims: { openid: ["sub"], email: ["email"], profile: ["preferred_username"], groups: ["groups"] },
  scopes: ["openid", "email", "profile", "groups", "mcp"],
  findAccount: async (_ctx, id) => ({ accountId: id, claims: async () => account(id) }),
  features: {
    devInteractions: { enabled: true },
    registration: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => undefined,
      useGrantedResource: () => true,
      getResourceServerInfo: (_ctx, resource) => ({ scope: "mcp", audience: resource, accessTokenFormat: "jwt" }),
    },
  },
  extraTokenClaims: (_ctx, token) =>
    token.accountId ? { preferred_username: token.accountId, organization: person(token.accountId).organization } : {},
  pkce: { required: () => false },
});
provider.proxy = false;
provider.listen(Number(port), "127.0.0.1", () => console.log(`listening on ${port}`));

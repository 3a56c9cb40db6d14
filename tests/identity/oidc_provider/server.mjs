// An OpenID Connect provider for the single sign-on tests: `oidc-provider` (an independent,
// certified implementation) with its development login page, which accepts any login name.
// Usage: node server.mjs PORT CLIENT_ID CLIENT_SECRET REDIRECT_URI ACCOUNTS_JSON
// ACCOUNTS_JSON maps a login name to {email, groups}; it is read again at every sign-in, so a test
// can change a person's groups between two sign-ins.
import fs from "node:fs";
import Provider from "oidc-provider";

const [port, clientId, clientSecret, redirectUri, accountsFile] = process.argv.slice(2);

function account(id) {
  const accounts = JSON.parse(fs.readFileSync(accountsFile, "utf8"));
  const person = accounts[id] || {};
  return { sub: id, preferred_username: id, email: person.email || `${id}@example.test`, groups: person.groups || [] };
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
  scopes: ["openid", "email", "profile", "groups"],
  findAccount: async (_ctx, id) => ({ accountId: id, claims: async () => account(id) }),
  features: { devInteractions: { enabled: true } },
  pkce: { required: () => false },
});
provider.proxy = false;
provider.listen(Number(port), "127.0.0.1", () => console.log(`listening on ${port}`));

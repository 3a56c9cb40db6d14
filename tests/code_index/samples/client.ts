import { sleep } from "./time";

/** Options of the API client. */
export interface ClientOptions {
  baseUrl: string;
  retries: number;
  timeoutMs: number;
}

export class ApiClient {
  constructor(private readonly options: ClientOptions) {}

  async getJson<T>(path: string): Promise<T> {
    for (let attempt = 0; attempt <= this.options.retries; attempt++) {
      const response = await fetch(`${this.options.baseUrl}${path}`);
      if (response.ok) return (await response.json()) as T;
      await sleep(100 * 2 ** attempt);
    }
    throw new Error(`GET ${path} failed after ${this.options.retries} retries`);
  }
}

export function buildUserAgent(name: string, version: string): string {
  const platform = typeof navigator === "undefined" ? "node" : navigator.userAgent;
  return `${name}/${version} (${platform}; retries enabled; json only)`;
}

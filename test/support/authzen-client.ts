// An AuthZEN 1.0 Policy Enforcement Point's client, written from the specification alone
// (openid/authzen api/authorization-api-1_0.md): the PDP's metadata at
// /.well-known/authzen-configuration (§9), the endpoints it names (§10.1), JSON bodies, the
// bearer credential and X-Request-ID (§10.1.3). It knows nothing of svc's own types.

export interface PdpAnswer {
  status: number;
  requestId: string | null;
  body: unknown;
}

export interface AuthzenClient {
  metadata: Record<string, unknown>;
  evaluation(request: unknown, options?: { requestId?: string }): Promise<PdpAnswer>;
  evaluations(request: unknown, options?: { requestId?: string }): Promise<PdpAnswer>;
}

/** Discovers the PDP at `pdp` (its identifier) and checks the metadata names it (§9.3). */
export async function discoverPdp(pdp: string, token: string): Promise<AuthzenClient> {
  const res = await fetch(`${pdp}/.well-known/authzen-configuration`);
  if (res.status !== 200) throw new Error(`metadata answered ${res.status}`);
  const metadata = (await res.json()) as Record<string, unknown>;
  if (metadata.policy_decision_point !== pdp) {
    throw new Error(`metadata names ${String(metadata.policy_decision_point)}, not ${pdp}`);
  }
  const post = async (endpoint: unknown, request: unknown, requestId?: string) => {
    if (typeof endpoint !== 'string') throw new Error('endpoint not offered');
    const answer = await fetch(endpoint, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        Authorization: `Bearer ${token}`,
        ...(requestId ? { 'X-Request-ID': requestId } : {}),
      },
      body: JSON.stringify(request),
    });
    const text = await answer.text();
    return {
      status: answer.status,
      requestId: answer.headers.get('x-request-id'),
      body: text ? (JSON.parse(text) as unknown) : null,
    };
  };
  return {
    metadata,
    evaluation: (request, options = {}) =>
      post(metadata.access_evaluation_endpoint, request, options.requestId),
    evaluations: (request, options = {}) =>
      post(metadata.access_evaluations_endpoint, request, options.requestId),
  };
}

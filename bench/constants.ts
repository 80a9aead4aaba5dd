/** Values shared by the harness and the peer server it spawns. */
export const PEER_RESOURCE = 'https://api.bench.example/v1';
export const PEER_SCOPE = 'kyc:read kyc:write';
export const PEER_CLIENT_ID = 'bench';
export const PEER_CLIENT_SECRET = 'bench-secret-0123456789abcdef0123456789abcdef';

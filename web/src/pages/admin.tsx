// The administration pages, one file each under admin/: an org's
// members, keys, SSH keys and secrets, and the installation admin's
// orgs, providers, warm pool and provisions.
export { Members } from "./admin/members";
export { Keys } from "./admin/keys";
export { SSHKeys } from "./admin/sshkeys";
export { Secrets } from "./admin/secrets";
export { Orgs } from "./admin/orgs";
export { Providers } from "./admin/providers";
export { WarmPool } from "./admin/warmpool";
export { Provisions } from "./admin/provisions";

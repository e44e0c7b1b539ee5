package postgres

// LockConns is lockConns, for the tests of the lock pool's bound.
const LockConns = lockConns

-- 0023: a host's mode. 'container' (the default, as every host before this
-- migration): its sandboxes are containers of the Docker engine at
-- docker_socket. 'bare': the machine has sshd only, and each sandbox is the
-- agent as PID 1 of namespaces of its own (the ssh provider's bare mode);
-- docker_socket is then empty.

ALTER TABLE hosts ADD COLUMN mode TEXT NOT NULL DEFAULT 'container' CHECK (mode IN ('container', 'bare'));

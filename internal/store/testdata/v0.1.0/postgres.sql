--
-- PostgreSQL database dump
--


-- Dumped from database version 15.18 (Debian 15.18-0+deb12u1)
-- Dumped by pg_dump version 15.18 (Debian 15.18-0+deb12u1)

SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

--
-- Name: credit_journal_append_only(); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.credit_journal_append_only() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    RAISE EXCEPTION 'the credit journal is append-only';
END;
$$;


SET default_tablespace = '';

SET default_table_access_method = heap;

--
-- Name: api_keys; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.api_keys (
    id text NOT NULL,
    name text DEFAULT ''::text NOT NULL,
    hash text NOT NULL,
    prefix text DEFAULT ''::text NOT NULL,
    role text NOT NULL,
    org_id text,
    created_at timestamp with time zone NOT NULL,
    user_id text,
    workspace_id text,
    created_by text DEFAULT ''::text NOT NULL,
    maker_user_id text,
    expires_at timestamp with time zone,
    revoked_at timestamp with time zone
);


--
-- Name: auth_challenges; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.auth_challenges (
    nonce text NOT NULL,
    wallet text NOT NULL,
    message text NOT NULL,
    created_at timestamp with time zone NOT NULL,
    expires_at timestamp with time zone NOT NULL
);


--
-- Name: auth_sessions; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.auth_sessions (
    id text NOT NULL,
    user_id text NOT NULL,
    created_at timestamp with time zone NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    revoked_at timestamp with time zone
);


--
-- Name: capability_bindings; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.capability_bindings (
    id text NOT NULL,
    org_id text NOT NULL,
    runtime_id text NOT NULL,
    source text NOT NULL,
    name text NOT NULL,
    version text NOT NULL,
    enabled boolean NOT NULL,
    flags text NOT NULL,
    status text NOT NULL,
    rev bigint NOT NULL,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL,
    CONSTRAINT capability_bindings_source_check CHECK ((source = ANY (ARRAY['catalog'::text, 'inventory'::text])))
);


--
-- Name: capability_versions; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.capability_versions (
    id text NOT NULL,
    org_id text NOT NULL,
    name text NOT NULL,
    version text NOT NULL,
    description text NOT NULL,
    digest text NOT NULL,
    contents text NOT NULL,
    bundle bytea NOT NULL,
    size_bytes bigint NOT NULL,
    created_at timestamp with time zone NOT NULL
);


--
-- Name: credit_accounts; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.credit_accounts (
    org_id text NOT NULL,
    balance_micros bigint DEFAULT 0 NOT NULL,
    held_micros bigint DEFAULT 0 NOT NULL,
    updated_at timestamp with time zone NOT NULL,
    CONSTRAINT credit_accounts_balance_micros_check CHECK ((balance_micros >= 0)),
    CONSTRAINT credit_accounts_held_micros_check CHECK ((held_micros >= 0))
);


--
-- Name: credit_journal; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.credit_journal (
    seq bigint NOT NULL,
    id text NOT NULL,
    org_id text NOT NULL,
    kind text NOT NULL,
    amount_micros bigint NOT NULL,
    held_micros bigint NOT NULL,
    balance_after_micros bigint NOT NULL,
    held_after_micros bigint NOT NULL,
    shortfall_micros bigint DEFAULT 0 NOT NULL,
    sandbox_id text DEFAULT ''::text NOT NULL,
    runtime_id text DEFAULT ''::text NOT NULL,
    project_id text DEFAULT ''::text NOT NULL,
    workspace_id text DEFAULT ''::text NOT NULL,
    period_start timestamp with time zone,
    period_end timestamp with time zone,
    idempotency_key text NOT NULL,
    note text DEFAULT ''::text NOT NULL,
    actor text DEFAULT ''::text NOT NULL,
    created_at timestamp with time zone NOT NULL,
    CONSTRAINT credit_journal_balance_after_micros_check CHECK ((balance_after_micros >= 0)),
    CONSTRAINT credit_journal_held_after_micros_check CHECK ((held_after_micros >= 0)),
    CONSTRAINT credit_journal_kind_check CHECK ((kind = ANY (ARRAY['grant'::text, 'adjustment'::text, 'hold'::text, 'release'::text, 'deduction'::text, 'refund'::text]))),
    CONSTRAINT credit_journal_shortfall_micros_check CHECK ((shortfall_micros >= 0))
);


--
-- Name: credit_journal_seq_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.credit_journal ALTER COLUMN seq ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.credit_journal_seq_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: egress_decisions; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.egress_decisions (
    id text NOT NULL,
    org_id text NOT NULL,
    workspace_id text NOT NULL,
    runtime_id text NOT NULL,
    sandbox_id text NOT NULL,
    created_at timestamp with time zone NOT NULL,
    allowed boolean NOT NULL,
    reason text NOT NULL,
    method text NOT NULL,
    host text NOT NULL,
    port bigint NOT NULL,
    addr text NOT NULL,
    bytes_up bigint NOT NULL,
    bytes_down bigint NOT NULL,
    duration_micros bigint NOT NULL,
    brokered boolean NOT NULL,
    refusal text DEFAULT ''::text NOT NULL
);


--
-- Name: invitations; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.invitations (
    id text NOT NULL,
    org_id text NOT NULL,
    email text,
    wallet text,
    role text NOT NULL,
    inviter_id text NOT NULL,
    state text DEFAULT 'pending'::text NOT NULL,
    created_at timestamp with time zone NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    decided_at timestamp with time zone,
    CONSTRAINT invitations_check CHECK (((email IS NULL) <> (wallet IS NULL))),
    CONSTRAINT invitations_check1 CHECK (((state = 'pending'::text) = (decided_at IS NULL))),
    CONSTRAINT invitations_email_check CHECK (((email IS NULL) OR (email <> ''::text))),
    CONSTRAINT invitations_role_check CHECK ((role = ANY (ARRAY['owner'::text, 'admin'::text, 'member'::text, 'viewer'::text]))),
    CONSTRAINT invitations_state_check CHECK ((state = ANY (ARRAY['pending'::text, 'accepted'::text, 'declined'::text, 'revoked'::text, 'expired'::text]))),
    CONSTRAINT invitations_wallet_check CHECK (((wallet IS NULL) OR (wallet <> ''::text)))
);


--
-- Name: meta; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.meta (
    key text NOT NULL,
    value text NOT NULL
);


--
-- Name: org_members; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.org_members (
    id text NOT NULL,
    org_id text NOT NULL,
    user_id text NOT NULL,
    role text NOT NULL,
    created_at timestamp with time zone NOT NULL,
    CONSTRAINT org_members_role_check CHECK ((role = ANY (ARRAY['owner'::text, 'admin'::text, 'member'::text, 'viewer'::text])))
);


--
-- Name: orgs; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.orgs (
    id text NOT NULL,
    name text NOT NULL,
    created_at timestamp with time zone NOT NULL
);


--
-- Name: projects; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.projects (
    id text NOT NULL,
    org_id text NOT NULL,
    workspace_id text NOT NULL,
    name text NOT NULL,
    description text DEFAULT ''::text NOT NULL,
    created_at timestamp with time zone NOT NULL
);


--
-- Name: runtimes; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.runtimes (
    id text NOT NULL,
    org_id text NOT NULL,
    workspace_id text NOT NULL,
    project_id text NOT NULL,
    status text NOT NULL,
    status_reason text DEFAULT ''::text NOT NULL,
    config text NOT NULL,
    current_sandbox_id text DEFAULT ''::text NOT NULL,
    workspace_volume text DEFAULT ''::text NOT NULL,
    version bigint NOT NULL,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL,
    snapshot text DEFAULT ''::text NOT NULL
);


--
-- Name: sandboxes; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.sandboxes (
    id text NOT NULL,
    org_id text NOT NULL,
    workspace_id text DEFAULT ''::text NOT NULL,
    project_id text DEFAULT ''::text NOT NULL,
    runtime_id text DEFAULT ''::text NOT NULL,
    kind text NOT NULL,
    state text NOT NULL,
    pause_reason text DEFAULT ''::text NOT NULL,
    provider text DEFAULT ''::text NOT NULL,
    provider_sandbox_id text DEFAULT ''::text NOT NULL,
    provider_state bytea,
    image text DEFAULT ''::text NOT NULL,
    cpu_millis bigint DEFAULT 0 NOT NULL,
    memory_mb bigint DEFAULT 0 NOT NULL,
    secret_ids text,
    kill_reason text DEFAULT ''::text NOT NULL,
    error text DEFAULT ''::text NOT NULL,
    billed_micros bigint DEFAULT 0 NOT NULL,
    created_at timestamp with time zone NOT NULL,
    started_at timestamp with time zone,
    paused_at timestamp with time zone,
    killed_at timestamp with time zone,
    expires_at timestamp with time zone,
    last_settled_at timestamp with time zone,
    version bigint NOT NULL,
    updated_at timestamp with time zone NOT NULL,
    running_since timestamp with time zone,
    network text DEFAULT 'none'::text NOT NULL,
    billing_version bigint DEFAULT 1 NOT NULL
);


--
-- Name: schema_migrations; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.schema_migrations (
    version bigint NOT NULL,
    name text NOT NULL,
    applied_at timestamp with time zone NOT NULL
);


--
-- Name: secrets; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.secrets (
    id text NOT NULL,
    org_id text NOT NULL,
    workspace_id text NOT NULL,
    name text NOT NULL,
    env text NOT NULL,
    brokered boolean NOT NULL,
    hosts text NOT NULL,
    key_id text NOT NULL,
    sealed bytea NOT NULL,
    version bigint NOT NULL,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL
);


--
-- Name: session_events; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.session_events (
    session_id text NOT NULL,
    seq bigint NOT NULL,
    turn bigint NOT NULL,
    type text NOT NULL,
    at timestamp with time zone NOT NULL,
    body text NOT NULL
);


--
-- Name: sessions; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.sessions (
    id text NOT NULL,
    org_id text NOT NULL,
    workspace_id text NOT NULL,
    runtime_id text NOT NULL,
    kind text NOT NULL,
    harness text NOT NULL,
    harness_session_id text NOT NULL,
    status text NOT NULL,
    title text NOT NULL,
    turns bigint NOT NULL,
    events bigint NOT NULL,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL,
    CONSTRAINT sessions_kind_check CHECK ((kind = ANY (ARRAY['prompt'::text, 'task'::text])))
);


--
-- Name: ssh_keys; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.ssh_keys (
    id text NOT NULL,
    user_id text NOT NULL,
    name text DEFAULT ''::text NOT NULL,
    fingerprint text NOT NULL,
    public_key text NOT NULL,
    org_id text,
    workspace_id text,
    role text,
    api_key_id text,
    created_at timestamp with time zone NOT NULL,
    CONSTRAINT ssh_keys_check CHECK (((workspace_id IS NULL) OR (org_id IS NOT NULL))),
    CONSTRAINT ssh_keys_check1 CHECK (((org_id IS NULL) = (role IS NULL))),
    CONSTRAINT ssh_keys_fingerprint_check CHECK ((fingerprint <> ''::text)),
    CONSTRAINT ssh_keys_public_key_check CHECK ((public_key <> ''::text)),
    CONSTRAINT ssh_keys_role_check CHECK ((role = ANY (ARRAY['owner'::text, 'admin'::text, 'member'::text, 'viewer'::text])))
);


--
-- Name: users; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.users (
    id text NOT NULL,
    email text,
    wallet text,
    name text DEFAULT ''::text NOT NULL,
    created_at timestamp with time zone NOT NULL,
    CONSTRAINT users_check CHECK (((COALESCE(email, ''::text) <> ''::text) OR (COALESCE(wallet, ''::text) <> ''::text) OR (name <> ''::text)))
);


--
-- Name: warm_sandboxes; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.warm_sandboxes (
    id text NOT NULL,
    template text NOT NULL,
    state text NOT NULL,
    provider text NOT NULL,
    provider_sandbox_id text DEFAULT ''::text NOT NULL,
    provider_state bytea,
    image text DEFAULT ''::text NOT NULL,
    cpu_millis bigint DEFAULT 0 NOT NULL,
    memory_mb bigint DEFAULT 0 NOT NULL,
    workspace_volume text NOT NULL,
    created_at timestamp with time zone NOT NULL,
    updated_at timestamp with time zone NOT NULL,
    CONSTRAINT warm_sandboxes_state_check CHECK ((state = ANY (ARRAY['creating'::text, 'ready'::text])))
);


--
-- Name: workspace_members; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.workspace_members (
    id text NOT NULL,
    org_id text NOT NULL,
    workspace_id text NOT NULL,
    user_id text NOT NULL,
    created_at timestamp with time zone NOT NULL
);


--
-- Name: workspaces; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.workspaces (
    id text NOT NULL,
    org_id text NOT NULL,
    name text NOT NULL,
    created_at timestamp with time zone NOT NULL,
    member_limit bigint DEFAULT 0 NOT NULL,
    CONSTRAINT workspaces_member_limit_check CHECK ((member_limit >= 0))
);


--
-- Data for Name: api_keys; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.api_keys VALUES ('1c5197e7-7f52-49d1-94e4-f1d9691db6f9', 'bootstrap admin', '8b4c47ad189e9267f0f8fa07a9099d8ed405b40e99111c721e0f540eb2b55ae7', 'pdk_000000', 'admin', NULL, '2026-11-27 13:35:05.915639+00', NULL, NULL, '', NULL, NULL, NULL);
INSERT INTO public.api_keys VALUES ('5cc2a400-6542-4d12-bc1c-7932cb347eac', 'laptop', '9eae974adb8ab71853f26653c5fa02af25dc74f95b998c2069d5bec2665b78ef', 'pdk_0d832c', 'owner', '11509d52-f0ad-4719-94e2-c42cbbe00951', '2026-11-27 13:35:15.741768+00', '25c6b838-5c93-4cfd-94dd-76e44e19acb6', NULL, 'key:1c5197e7-7f52-49d1-94e4-f1d9691db6f9', NULL, NULL, NULL);


--
-- Data for Name: auth_challenges; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: auth_sessions; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: capability_bindings; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: capability_versions; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: credit_accounts; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.credit_accounts VALUES ('11509d52-f0ad-4719-94e2-c42cbbe00951', 349973154, 0, '2026-11-27 13:36:33.917088+00');


--
-- Data for Name: credit_journal; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.credit_journal OVERRIDING SYSTEM VALUE VALUES (1, 'f086cc32-8563-4ada-aec6-a1f7d49deea1', '11509d52-f0ad-4719-94e2-c42cbbe00951', 'grant', 100000000, 0, 100000000, 0, 0, '', '', '', '', NULL, NULL, 'new-org', 'starting credits', '', '2026-11-27 13:35:13.397672+00');
INSERT INTO public.credit_journal OVERRIDING SYSTEM VALUE VALUES (2, '163b9f9c-32ce-4255-a6a8-3a2169daa06b', '11509d52-f0ad-4719-94e2-c42cbbe00951', 'hold', 0, 21000, 100000000, 21000, 0, '7d1a1c20-3f39-4b5e-a064-153cb3f4e486', 'ae9448d3-6978-4bc3-9b17-9ba1e107f5b9', '2c06f0ba-959d-4a69-9ce7-16bd4e7eaa42', '6feaea40-769a-48c3-811b-057262ee9936', NULL, NULL, 'hold:7d1a1c20-3f39-4b5e-a064-153cb3f4e486:e190f66a-7300-4c47-95b7-fede32e2f47c', 'first 1m0s of compute', '', '2026-11-27 13:35:20.544879+00');
INSERT INTO public.credit_journal OVERRIDING SYSTEM VALUE VALUES (3, '855a7a11-9404-4fdf-851c-c94cfbd81841', '11509d52-f0ad-4719-94e2-c42cbbe00951', 'deduction', -21000, -21000, 99979000, 0, 0, '7d1a1c20-3f39-4b5e-a064-153cb3f4e486', 'ae9448d3-6978-4bc3-9b17-9ba1e107f5b9', '2c06f0ba-959d-4a69-9ce7-16bd4e7eaa42', '6feaea40-769a-48c3-811b-057262ee9936', '2026-11-27 13:35:20.546917+00', '2026-11-27 13:36:20.546917+00', 'charge:7d1a1c20-3f39-4b5e-a064-153cb3f4e486:e190f66a-7300-4c47-95b7-fede32e2f47c', 'first 1m0s prepaid', '', '2026-11-27 13:35:20.546917+00');
INSERT INTO public.credit_journal OVERRIDING SYSTEM VALUE VALUES (4, 'b8d8225d-394e-494f-8a97-70f36937ab67', '11509d52-f0ad-4719-94e2-c42cbbe00951', 'hold', 0, 10500, 99979000, 10500, 0, '80a41d17-fd8d-47ea-b06e-3feb5f12fe47', '7fbb444e-e319-4d81-ab69-76cc6b127752', '79c7f78f-8b21-48f5-a440-c63549b8ca0a', '6feaea40-769a-48c3-811b-057262ee9936', NULL, NULL, 'hold:80a41d17-fd8d-47ea-b06e-3feb5f12fe47:dc351743-5ea6-4c3b-a32c-f4172221cd18', 'first 1m0s of compute', '', '2026-11-27 13:35:20.61522+00');
INSERT INTO public.credit_journal OVERRIDING SYSTEM VALUE VALUES (5, '4516c741-f25a-4941-b39d-a10feb615d7b', '11509d52-f0ad-4719-94e2-c42cbbe00951', 'deduction', -10500, -10500, 99968500, 0, 0, '80a41d17-fd8d-47ea-b06e-3feb5f12fe47', '7fbb444e-e319-4d81-ab69-76cc6b127752', '79c7f78f-8b21-48f5-a440-c63549b8ca0a', '6feaea40-769a-48c3-811b-057262ee9936', '2026-11-27 13:35:20.616277+00', '2026-11-27 13:36:20.616277+00', 'charge:80a41d17-fd8d-47ea-b06e-3feb5f12fe47:dc351743-5ea6-4c3b-a32c-f4172221cd18', 'first 1m0s prepaid', '', '2026-11-27 13:35:20.616277+00');
INSERT INTO public.credit_journal OVERRIDING SYSTEM VALUE VALUES (6, 'b3ac05f9-70fe-48e0-abc2-001cc382dfee', '11509d52-f0ad-4719-94e2-c42cbbe00951', 'grant', 250000000, 0, 349968500, 0, 0, '', '', '', '', NULL, NULL, 'fixture-grant-1', 'fixture top-up', '1c5197e7-7f52-49d1-94e4-f1d9691db6f9', '2026-11-27 13:35:22.266638+00');
INSERT INTO public.credit_journal OVERRIDING SYSTEM VALUE VALUES (7, 'd68e9430-72dd-4090-82e0-f1480447a840', '11509d52-f0ad-4719-94e2-c42cbbe00951', 'refund', 9330, 0, 349977830, 0, 0, '80a41d17-fd8d-47ea-b06e-3feb5f12fe47', '7fbb444e-e319-4d81-ab69-76cc6b127752', '79c7f78f-8b21-48f5-a440-c63549b8ca0a', '6feaea40-769a-48c3-811b-057262ee9936', '2026-11-27 13:35:27.296474+00', '2026-11-27 13:36:20.616277+00', 'refund:80a41d17-fd8d-47ea-b06e-3feb5f12fe47:1795786527296474-1795786580616277', 'prepaid compute that did not run', '', '2026-11-27 13:35:27.296474+00');
INSERT INTO public.credit_journal OVERRIDING SYSTEM VALUE VALUES (8, '01a21d38-a79c-7ad8-92a7-76df27119e78', '11509d52-f0ad-4719-94e2-c42cbbe00951', 'deduction', -479, 0, 349977351, 0, 0, '7d1a1c20-3f39-4b5e-a064-153cb3f4e486', 'ae9448d3-6978-4bc3-9b17-9ba1e107f5b9', '2c06f0ba-959d-4a69-9ce7-16bd4e7eaa42', '6feaea40-769a-48c3-811b-057262ee9936', '2026-11-27 13:36:20.546917+00', '2026-11-27 13:36:21.916077+00', 'settle:7d1a1c20-3f39-4b5e-a064-153cb3f4e486:1795786580546917-1795786581916077', '', '', '2026-11-27 13:36:21.916077+00');
INSERT INTO public.credit_journal OVERRIDING SYSTEM VALUE VALUES (9, '01a21d38-af6d-71d8-b2fe-3d310f0c3abb', '11509d52-f0ad-4719-94e2-c42cbbe00951', 'deduction', -700, 0, 349976651, 0, 0, '7d1a1c20-3f39-4b5e-a064-153cb3f4e486', 'ae9448d3-6978-4bc3-9b17-9ba1e107f5b9', '2c06f0ba-959d-4a69-9ce7-16bd4e7eaa42', '6feaea40-769a-48c3-811b-057262ee9936', '2026-11-27 13:36:21.916077+00', '2026-11-27 13:36:23.916536+00', 'settle:7d1a1c20-3f39-4b5e-a064-153cb3f4e486:1795786581916077-1795786583916536', '', '', '2026-11-27 13:36:23.916536+00');
INSERT INTO public.credit_journal OVERRIDING SYSTEM VALUE VALUES (10, '01a21d38-b73e-7719-be81-d6578a43c2e1', '11509d52-f0ad-4719-94e2-c42cbbe00951', 'deduction', -700, 0, 349975951, 0, 0, '7d1a1c20-3f39-4b5e-a064-153cb3f4e486', 'ae9448d3-6978-4bc3-9b17-9ba1e107f5b9', '2c06f0ba-959d-4a69-9ce7-16bd4e7eaa42', '6feaea40-769a-48c3-811b-057262ee9936', '2026-11-27 13:36:23.916536+00', '2026-11-27 13:36:25.917973+00', 'settle:7d1a1c20-3f39-4b5e-a064-153cb3f4e486:1795786583916536-1795786585917973', '', '', '2026-11-27 13:36:25.917973+00');
INSERT INTO public.credit_journal OVERRIDING SYSTEM VALUE VALUES (11, '01a21d38-bf0d-78b8-9880-62d462ffa142', '11509d52-f0ad-4719-94e2-c42cbbe00951', 'deduction', -699, 0, 349975252, 0, 0, '7d1a1c20-3f39-4b5e-a064-153cb3f4e486', 'ae9448d3-6978-4bc3-9b17-9ba1e107f5b9', '2c06f0ba-959d-4a69-9ce7-16bd4e7eaa42', '6feaea40-769a-48c3-811b-057262ee9936', '2026-11-27 13:36:25.917973+00', '2026-11-27 13:36:27.916968+00', 'settle:7d1a1c20-3f39-4b5e-a064-153cb3f4e486:1795786585917973-1795786587916968', '', '', '2026-11-27 13:36:27.916968+00');
INSERT INTO public.credit_journal OVERRIDING SYSTEM VALUE VALUES (12, '01a21d38-c6eb-70c4-9e6b-b16617043a45', '11509d52-f0ad-4719-94e2-c42cbbe00951', 'deduction', -704, 0, 349974548, 0, 0, '7d1a1c20-3f39-4b5e-a064-153cb3f4e486', 'ae9448d3-6978-4bc3-9b17-9ba1e107f5b9', '2c06f0ba-959d-4a69-9ce7-16bd4e7eaa42', '6feaea40-769a-48c3-811b-057262ee9936', '2026-11-27 13:36:27.916968+00', '2026-11-27 13:36:29.930395+00', 'settle:7d1a1c20-3f39-4b5e-a064-153cb3f4e486:1795786587916968-1795786589930395', '', '', '2026-11-27 13:36:29.930395+00');
INSERT INTO public.credit_journal OVERRIDING SYSTEM VALUE VALUES (13, '01a21d38-ceb8-7225-8fb0-460c74bd5578', '11509d52-f0ad-4719-94e2-c42cbbe00951', 'deduction', -698, 0, 349973850, 0, 0, '7d1a1c20-3f39-4b5e-a064-153cb3f4e486', 'ae9448d3-6978-4bc3-9b17-9ba1e107f5b9', '2c06f0ba-959d-4a69-9ce7-16bd4e7eaa42', '6feaea40-769a-48c3-811b-057262ee9936', '2026-11-27 13:36:29.930395+00', '2026-11-27 13:36:31.927517+00', 'settle:7d1a1c20-3f39-4b5e-a064-153cb3f4e486:1795786589930395-1795786591927517', '', '', '2026-11-27 13:36:31.927517+00');
INSERT INTO public.credit_journal OVERRIDING SYSTEM VALUE VALUES (14, '01a21d38-d67d-7a43-b9aa-e35953a21ac9', '11509d52-f0ad-4719-94e2-c42cbbe00951', 'deduction', -696, 0, 349973154, 0, 0, '7d1a1c20-3f39-4b5e-a064-153cb3f4e486', 'ae9448d3-6978-4bc3-9b17-9ba1e107f5b9', '2c06f0ba-959d-4a69-9ce7-16bd4e7eaa42', '6feaea40-769a-48c3-811b-057262ee9936', '2026-11-27 13:36:31.927517+00', '2026-11-27 13:36:33.917088+00', 'settle:7d1a1c20-3f39-4b5e-a064-153cb3f4e486:1795786591927517-1795786593917088', '', '', '2026-11-27 13:36:33.917088+00');


--
-- Data for Name: egress_decisions; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: invitations; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.invitations VALUES ('c2d3d840-c574-4f7e-bd94-66e26c4c057c', '11509d52-f0ad-4719-94e2-c42cbbe00951', 'carol@example.com', NULL, 'member', '25c6b838-5c93-4cfd-94dd-76e44e19acb6', 'pending', '2026-11-27 13:35:18.858009+00', '2026-12-04 13:35:18.858009+00', NULL);


--
-- Data for Name: meta; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.meta VALUES ('instance_id', '9bf09ce6-580f-4377-a7d7-671879c27873');


--
-- Data for Name: org_members; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.org_members VALUES ('b4361547-ef99-4939-a45f-dda826d58db7', '11509d52-f0ad-4719-94e2-c42cbbe00951', '25c6b838-5c93-4cfd-94dd-76e44e19acb6', 'owner', '2026-11-27 13:35:15.700055+00');


--
-- Data for Name: orgs; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.orgs VALUES ('11509d52-f0ad-4719-94e2-c42cbbe00951', 'acme', '2026-11-27 13:35:13.3976+00');


--
-- Data for Name: projects; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.projects VALUES ('2c06f0ba-959d-4a69-9ce7-16bd4e7eaa42', '11509d52-f0ad-4719-94e2-c42cbbe00951', '6feaea40-769a-48c3-811b-057262ee9936', 'agent', '', '2026-11-27 13:35:18.876349+00');
INSERT INTO public.projects VALUES ('79c7f78f-8b21-48f5-a440-c63549b8ca0a', '11509d52-f0ad-4719-94e2-c42cbbe00951', '6feaea40-769a-48c3-811b-057262ee9936', 'batch', '', '2026-11-27 13:35:18.894774+00');


--
-- Data for Name: runtimes; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.runtimes VALUES ('ae9448d3-6978-4bc3-9b17-9ba1e107f5b9', '11509d52-f0ad-4719-94e2-c42cbbe00951', '6feaea40-769a-48c3-811b-057262ee9936', '2c06f0ba-959d-4a69-9ce7-16bd4e7eaa42', 'running', '', '{"image":"paddock/debian:bookworm","provider":"fake","cpu_millis":1000,"memory_mb":1024,"pids_limit":256,"disk_mb":10240,"network":{"mode":"none"},"idle_timeout_seconds":900,"secrets":["api-token"],"rootfs":"readonly","user":"user"}', '7d1a1c20-3f39-4b5e-a064-153cb3f4e486', 'paddock-ws-ae9448d3-6978-4bc3-9b17-9ba1e107f5b9', 3, '2026-11-27 13:35:18.876349+00', '2026-11-27 13:35:20.546917+00', '');
INSERT INTO public.runtimes VALUES ('7fbb444e-e319-4d81-ab69-76cc6b127752', '11509d52-f0ad-4719-94e2-c42cbbe00951', '6feaea40-769a-48c3-811b-057262ee9936', '79c7f78f-8b21-48f5-a440-c63549b8ca0a', 'paused', '', '{"image":"paddock/debian:bookworm","provider":"fake","cpu_millis":500,"memory_mb":512,"pids_limit":256,"disk_mb":10240,"network":{"mode":"none"},"idle_timeout_seconds":1800,"rootfs":"readonly","user":"user"}', '80a41d17-fd8d-47ea-b06e-3feb5f12fe47', 'paddock-ws-7fbb444e-e319-4d81-ab69-76cc6b127752', 4, '2026-11-27 13:35:18.894774+00', '2026-11-27 13:35:27.296474+00', '');


--
-- Data for Name: sandboxes; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.sandboxes VALUES ('7d1a1c20-3f39-4b5e-a064-153cb3f4e486', '11509d52-f0ad-4719-94e2-c42cbbe00951', '6feaea40-769a-48c3-811b-057262ee9936', '2c06f0ba-959d-4a69-9ce7-16bd4e7eaa42', 'ae9448d3-6978-4bc3-9b17-9ba1e107f5b9', 'runtime', 'running', '', 'fake', 'fake-db2cc199-bd0a-4c35-84ae-9e1b601f91c7', '\x7b2276223a312c226964223a2266616b652d64623263633139392d626430612d346333352d383461652d396531623630316639316337227d', 'paddock/debian:bookworm', 1000, 1024, '["7b448a0d-4867-4742-837f-b04fc2591e4c"]', '', '', 25676, '2026-11-27 13:35:20.544879+00', '2026-11-27 13:35:20.546917+00', NULL, NULL, '2026-11-27 13:50:20.546917+00', '2026-11-27 13:36:33.917088+00', 3, '2026-11-27 13:35:20.546917+00', '2026-11-27 13:35:20.546917+00', 'none', 9);
INSERT INTO public.sandboxes VALUES ('80a41d17-fd8d-47ea-b06e-3feb5f12fe47', '11509d52-f0ad-4719-94e2-c42cbbe00951', '6feaea40-769a-48c3-811b-057262ee9936', '79c7f78f-8b21-48f5-a440-c63549b8ca0a', '7fbb444e-e319-4d81-ab69-76cc6b127752', 'runtime', 'paused', 'user', 'fake', 'fake-3364889c-261d-4411-9974-e40978f79aec', '\x7b2276223a312c226964223a2266616b652d33333634383839632d323631642d343431312d393937342d653430393738663739616563227d', 'paddock/debian:bookworm', 500, 512, NULL, '', '', 1170, '2026-11-27 13:35:20.61522+00', '2026-11-27 13:35:20.616277+00', '2026-11-27 13:35:27.296473+00', NULL, '2026-11-27 14:05:20.616277+00', '2026-11-27 13:35:27.296474+00', 4, '2026-11-27 13:35:27.296473+00', '2026-11-27 13:35:20.616277+00', 'none', 3);


--
-- Data for Name: schema_migrations; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.schema_migrations VALUES (1, '0001_init.sql', '2026-11-27 13:37:31.7332+00');
INSERT INTO public.schema_migrations VALUES (2, '0002_credits.sql', '2026-11-27 13:37:31.7332+00');
INSERT INTO public.schema_migrations VALUES (3, '0003_lifecycle.sql', '2026-11-27 13:37:31.7332+00');
INSERT INTO public.schema_migrations VALUES (4, '0004_egress.sql', '2026-11-27 13:37:31.7332+00');
INSERT INTO public.schema_migrations VALUES (5, '0005_secrets.sql', '2026-11-27 13:37:31.7332+00');
INSERT INTO public.schema_migrations VALUES (6, '0006_billing_version.sql', '2026-11-27 13:37:31.7332+00');
INSERT INTO public.schema_migrations VALUES (7, '0007_capabilities.sql', '2026-11-27 13:37:31.7332+00');
INSERT INTO public.schema_migrations VALUES (8, '0008_identity.sql', '2026-11-27 13:37:31.7332+00');
INSERT INTO public.schema_migrations VALUES (9, '0009_ssh_keys.sql', '2026-11-27 13:37:31.7332+00');
INSERT INTO public.schema_migrations VALUES (10, '0010_invitations.sql', '2026-11-27 13:37:31.7332+00');
INSERT INTO public.schema_migrations VALUES (11, '0011_egress_refusal.sql', '2026-11-27 13:37:31.7332+00');


--
-- Data for Name: secrets; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.secrets VALUES ('7b448a0d-4867-4742-837f-b04fc2591e4c', '11509d52-f0ad-4719-94e2-c42cbbe00951', '6feaea40-769a-48c3-811b-057262ee9936', 'api-token', 'API_TOKEN', false, '[]', 'c5ea9d4bdd8ad6e9', '\x5574785fccd65a5d530ae1820376cc0d48bd2fe5ce249d8fd130db66d81de49a6e5792d95871919cc024bbdf2cf18b20ed81b31c8eed71', 1, '2026-11-27 13:35:18.813627+00', '2026-11-27 13:35:18.813627+00');


--
-- Data for Name: session_events; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: sessions; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: ssh_keys; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.ssh_keys VALUES ('25311bc0-2d5b-467f-9b78-2a207cc66cb0', '25c6b838-5c93-4cfd-94dd-76e44e19acb6', 'ann-laptop', 'SHA256:a/YhqFJvK1RavT/fBbL7o1Iu8Ju5wvMIlB9Z55F05tg', 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIPy9EKmGu2cADVXfmcD05CZWiTzEtIWtt1oGBP/kg6Nj', '11509d52-f0ad-4719-94e2-c42cbbe00951', NULL, 'owner', '5cc2a400-6542-4d12-bc1c-7932cb347eac', '2026-11-27 13:35:18.842981+00');


--
-- Data for Name: users; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.users VALUES ('25c6b838-5c93-4cfd-94dd-76e44e19acb6', 'ann@example.com', NULL, 'Ann', '2026-11-27 13:35:13.506143+00');
INSERT INTO public.users VALUES ('45a140da-97ea-49ec-8504-f0ef5013f652', 'bob@example.com', NULL, 'Bob', '2026-11-27 13:35:13.525304+00');


--
-- Data for Name: warm_sandboxes; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: workspace_members; Type: TABLE DATA; Schema: public; Owner: -
--



--
-- Data for Name: workspaces; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.workspaces VALUES ('6feaea40-769a-48c3-811b-057262ee9936', '11509d52-f0ad-4719-94e2-c42cbbe00951', 'dev', '2026-11-27 13:35:15.725836+00', 0);


--
-- Name: credit_journal_seq_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.credit_journal_seq_seq', 15, false);


--
-- Name: api_keys api_keys_hash_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.api_keys
    ADD CONSTRAINT api_keys_hash_key UNIQUE (hash);


--
-- Name: api_keys api_keys_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.api_keys
    ADD CONSTRAINT api_keys_pkey PRIMARY KEY (id);


--
-- Name: auth_challenges auth_challenges_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.auth_challenges
    ADD CONSTRAINT auth_challenges_pkey PRIMARY KEY (nonce);


--
-- Name: auth_sessions auth_sessions_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.auth_sessions
    ADD CONSTRAINT auth_sessions_pkey PRIMARY KEY (id);


--
-- Name: capability_bindings capability_bindings_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.capability_bindings
    ADD CONSTRAINT capability_bindings_pkey PRIMARY KEY (id);


--
-- Name: capability_bindings capability_bindings_runtime_id_name_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.capability_bindings
    ADD CONSTRAINT capability_bindings_runtime_id_name_key UNIQUE (runtime_id, name);


--
-- Name: capability_versions capability_versions_org_id_name_version_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.capability_versions
    ADD CONSTRAINT capability_versions_org_id_name_version_key UNIQUE (org_id, name, version);


--
-- Name: capability_versions capability_versions_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.capability_versions
    ADD CONSTRAINT capability_versions_pkey PRIMARY KEY (id);


--
-- Name: credit_accounts credit_accounts_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.credit_accounts
    ADD CONSTRAINT credit_accounts_pkey PRIMARY KEY (org_id);


--
-- Name: credit_journal credit_journal_id_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.credit_journal
    ADD CONSTRAINT credit_journal_id_key UNIQUE (id);


--
-- Name: credit_journal credit_journal_org_id_idempotency_key_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.credit_journal
    ADD CONSTRAINT credit_journal_org_id_idempotency_key_key UNIQUE (org_id, idempotency_key);


--
-- Name: credit_journal credit_journal_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.credit_journal
    ADD CONSTRAINT credit_journal_pkey PRIMARY KEY (seq);


--
-- Name: egress_decisions egress_decisions_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.egress_decisions
    ADD CONSTRAINT egress_decisions_pkey PRIMARY KEY (id);


--
-- Name: invitations invitations_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.invitations
    ADD CONSTRAINT invitations_pkey PRIMARY KEY (id);


--
-- Name: meta meta_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.meta
    ADD CONSTRAINT meta_pkey PRIMARY KEY (key);


--
-- Name: org_members org_members_org_id_user_id_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.org_members
    ADD CONSTRAINT org_members_org_id_user_id_key UNIQUE (org_id, user_id);


--
-- Name: org_members org_members_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.org_members
    ADD CONSTRAINT org_members_pkey PRIMARY KEY (id);


--
-- Name: orgs orgs_name_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.orgs
    ADD CONSTRAINT orgs_name_key UNIQUE (name);


--
-- Name: orgs orgs_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.orgs
    ADD CONSTRAINT orgs_pkey PRIMARY KEY (id);


--
-- Name: projects projects_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.projects
    ADD CONSTRAINT projects_pkey PRIMARY KEY (id);


--
-- Name: projects projects_workspace_id_name_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.projects
    ADD CONSTRAINT projects_workspace_id_name_key UNIQUE (workspace_id, name);


--
-- Name: runtimes runtimes_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.runtimes
    ADD CONSTRAINT runtimes_pkey PRIMARY KEY (id);


--
-- Name: runtimes runtimes_project_id_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.runtimes
    ADD CONSTRAINT runtimes_project_id_key UNIQUE (project_id);


--
-- Name: sandboxes sandboxes_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.sandboxes
    ADD CONSTRAINT sandboxes_pkey PRIMARY KEY (id);


--
-- Name: schema_migrations schema_migrations_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.schema_migrations
    ADD CONSTRAINT schema_migrations_pkey PRIMARY KEY (version);


--
-- Name: secrets secrets_org_id_workspace_id_name_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.secrets
    ADD CONSTRAINT secrets_org_id_workspace_id_name_key UNIQUE (org_id, workspace_id, name);


--
-- Name: secrets secrets_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.secrets
    ADD CONSTRAINT secrets_pkey PRIMARY KEY (id);


--
-- Name: session_events session_events_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.session_events
    ADD CONSTRAINT session_events_pkey PRIMARY KEY (session_id, seq);


--
-- Name: sessions sessions_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.sessions
    ADD CONSTRAINT sessions_pkey PRIMARY KEY (id);


--
-- Name: ssh_keys ssh_keys_fingerprint_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.ssh_keys
    ADD CONSTRAINT ssh_keys_fingerprint_key UNIQUE (fingerprint);


--
-- Name: ssh_keys ssh_keys_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.ssh_keys
    ADD CONSTRAINT ssh_keys_pkey PRIMARY KEY (id);


--
-- Name: users users_email_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.users
    ADD CONSTRAINT users_email_key UNIQUE (email);


--
-- Name: users users_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.users
    ADD CONSTRAINT users_pkey PRIMARY KEY (id);


--
-- Name: users users_wallet_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.users
    ADD CONSTRAINT users_wallet_key UNIQUE (wallet);


--
-- Name: warm_sandboxes warm_sandboxes_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.warm_sandboxes
    ADD CONSTRAINT warm_sandboxes_pkey PRIMARY KEY (id);


--
-- Name: workspace_members workspace_members_new_workspace_id_user_id_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.workspace_members
    ADD CONSTRAINT workspace_members_new_workspace_id_user_id_key UNIQUE (workspace_id, user_id);


--
-- Name: workspace_members workspace_members_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.workspace_members
    ADD CONSTRAINT workspace_members_pkey PRIMARY KEY (id);


--
-- Name: workspaces workspaces_org_id_name_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.workspaces
    ADD CONSTRAINT workspaces_org_id_name_key UNIQUE (org_id, name);


--
-- Name: workspaces workspaces_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.workspaces
    ADD CONSTRAINT workspaces_pkey PRIMARY KEY (id);


--
-- Name: api_keys_created; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX api_keys_created ON public.api_keys USING btree (created_at, id);


--
-- Name: api_keys_org_created; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX api_keys_org_created ON public.api_keys USING btree (org_id, created_at, id);


--
-- Name: api_keys_user_created; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX api_keys_user_created ON public.api_keys USING btree (user_id, created_at, id);


--
-- Name: auth_challenges_expires; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX auth_challenges_expires ON public.auth_challenges USING btree (expires_at);


--
-- Name: auth_sessions_user; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX auth_sessions_user ON public.auth_sessions USING btree (user_id);


--
-- Name: capability_bindings_inventory; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX capability_bindings_inventory ON public.capability_bindings USING btree (org_id, source, name, version);


--
-- Name: credit_journal_org; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX credit_journal_org ON public.credit_journal USING btree (org_id, seq);


--
-- Name: credit_journal_org_created; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX credit_journal_org_created ON public.credit_journal USING btree (org_id, created_at);


--
-- Name: credit_journal_project; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX credit_journal_project ON public.credit_journal USING btree (org_id, project_id, seq);


--
-- Name: credit_journal_runtime; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX credit_journal_runtime ON public.credit_journal USING btree (org_id, runtime_id, seq);


--
-- Name: credit_journal_sandbox; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX credit_journal_sandbox ON public.credit_journal USING btree (org_id, sandbox_id, seq);


--
-- Name: egress_decisions_by_runtime; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX egress_decisions_by_runtime ON public.egress_decisions USING btree (runtime_id, created_at, id);


--
-- Name: egress_decisions_by_sandbox; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX egress_decisions_by_sandbox ON public.egress_decisions USING btree (sandbox_id, created_at, id);


--
-- Name: egress_decisions_by_time; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX egress_decisions_by_time ON public.egress_decisions USING btree (created_at);


--
-- Name: invitations_email; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX invitations_email ON public.invitations USING btree (email) WHERE (email IS NOT NULL);


--
-- Name: invitations_inviter; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX invitations_inviter ON public.invitations USING btree (org_id, inviter_id) WHERE (state = 'pending'::text);


--
-- Name: invitations_org_created; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX invitations_org_created ON public.invitations USING btree (org_id, created_at, id);


--
-- Name: invitations_pending_email; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX invitations_pending_email ON public.invitations USING btree (org_id, email) WHERE ((state = 'pending'::text) AND (email IS NOT NULL));


--
-- Name: invitations_pending_wallet; Type: INDEX; Schema: public; Owner: -
--

CREATE UNIQUE INDEX invitations_pending_wallet ON public.invitations USING btree (org_id, wallet) WHERE ((state = 'pending'::text) AND (wallet IS NOT NULL));


--
-- Name: invitations_wallet; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX invitations_wallet ON public.invitations USING btree (wallet) WHERE (wallet IS NOT NULL);


--
-- Name: org_members_org_created; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX org_members_org_created ON public.org_members USING btree (org_id, created_at, id);


--
-- Name: org_members_user; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX org_members_user ON public.org_members USING btree (user_id);


--
-- Name: orgs_created; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX orgs_created ON public.orgs USING btree (created_at, id);


--
-- Name: projects_workspace_created; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX projects_workspace_created ON public.projects USING btree (workspace_id, created_at, id);


--
-- Name: runtimes_status_created; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX runtimes_status_created ON public.runtimes USING btree (status, created_at, id);


--
-- Name: runtimes_workspace_created; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX runtimes_workspace_created ON public.runtimes USING btree (workspace_id, created_at, id);


--
-- Name: sandboxes_live; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX sandboxes_live ON public.sandboxes USING btree (provider, state) WHERE (state <> 'killed'::text);


--
-- Name: sandboxes_org_created; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX sandboxes_org_created ON public.sandboxes USING btree (org_id, created_at, id);


--
-- Name: sandboxes_org_provider_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX sandboxes_org_provider_id ON public.sandboxes USING btree (org_id, provider_sandbox_id, created_at, id);


--
-- Name: sandboxes_runtime_created; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX sandboxes_runtime_created ON public.sandboxes USING btree (runtime_id, created_at, id);


--
-- Name: sandboxes_state_id; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX sandboxes_state_id ON public.sandboxes USING btree (state, id);


--
-- Name: sessions_runtime_created; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX sessions_runtime_created ON public.sessions USING btree (runtime_id, created_at, id);


--
-- Name: ssh_keys_user_created; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ssh_keys_user_created ON public.ssh_keys USING btree (user_id, created_at, id);


--
-- Name: users_created; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX users_created ON public.users USING btree (created_at, id);


--
-- Name: warm_sandboxes_claim; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX warm_sandboxes_claim ON public.warm_sandboxes USING btree (template, state, created_at, id);


--
-- Name: workspace_members_created; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX workspace_members_created ON public.workspace_members USING btree (workspace_id, created_at, id);


--
-- Name: workspace_members_user; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX workspace_members_user ON public.workspace_members USING btree (user_id);


--
-- Name: workspaces_org_created; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX workspaces_org_created ON public.workspaces USING btree (org_id, created_at, id);


--
-- Name: credit_journal credit_journal_no_delete; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER credit_journal_no_delete BEFORE DELETE ON public.credit_journal FOR EACH ROW EXECUTE FUNCTION public.credit_journal_append_only();


--
-- Name: credit_journal credit_journal_no_update; Type: TRIGGER; Schema: public; Owner: -
--

CREATE TRIGGER credit_journal_no_update BEFORE UPDATE ON public.credit_journal FOR EACH ROW EXECUTE FUNCTION public.credit_journal_append_only();


--
-- Name: api_keys api_keys_maker_user_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.api_keys
    ADD CONSTRAINT api_keys_maker_user_id_fkey FOREIGN KEY (maker_user_id) REFERENCES public.users(id) ON DELETE CASCADE;


--
-- Name: api_keys api_keys_org_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.api_keys
    ADD CONSTRAINT api_keys_org_id_fkey FOREIGN KEY (org_id) REFERENCES public.orgs(id);


--
-- Name: api_keys api_keys_user_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.api_keys
    ADD CONSTRAINT api_keys_user_id_fkey FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;


--
-- Name: api_keys api_keys_workspace_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.api_keys
    ADD CONSTRAINT api_keys_workspace_id_fkey FOREIGN KEY (workspace_id) REFERENCES public.workspaces(id);


--
-- Name: auth_sessions auth_sessions_user_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.auth_sessions
    ADD CONSTRAINT auth_sessions_user_id_fkey FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;


--
-- Name: capability_bindings capability_bindings_org_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.capability_bindings
    ADD CONSTRAINT capability_bindings_org_id_fkey FOREIGN KEY (org_id) REFERENCES public.orgs(id);


--
-- Name: capability_bindings capability_bindings_runtime_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.capability_bindings
    ADD CONSTRAINT capability_bindings_runtime_id_fkey FOREIGN KEY (runtime_id) REFERENCES public.runtimes(id) ON DELETE CASCADE;


--
-- Name: capability_versions capability_versions_org_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.capability_versions
    ADD CONSTRAINT capability_versions_org_id_fkey FOREIGN KEY (org_id) REFERENCES public.orgs(id);


--
-- Name: credit_accounts credit_accounts_org_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.credit_accounts
    ADD CONSTRAINT credit_accounts_org_id_fkey FOREIGN KEY (org_id) REFERENCES public.orgs(id);


--
-- Name: credit_journal credit_journal_org_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.credit_journal
    ADD CONSTRAINT credit_journal_org_id_fkey FOREIGN KEY (org_id) REFERENCES public.orgs(id);


--
-- Name: invitations invitations_inviter_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.invitations
    ADD CONSTRAINT invitations_inviter_id_fkey FOREIGN KEY (inviter_id) REFERENCES public.users(id) ON DELETE CASCADE;


--
-- Name: invitations invitations_org_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.invitations
    ADD CONSTRAINT invitations_org_id_fkey FOREIGN KEY (org_id) REFERENCES public.orgs(id);


--
-- Name: org_members org_members_org_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.org_members
    ADD CONSTRAINT org_members_org_id_fkey FOREIGN KEY (org_id) REFERENCES public.orgs(id);


--
-- Name: org_members org_members_user_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.org_members
    ADD CONSTRAINT org_members_user_id_fkey FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;


--
-- Name: projects projects_org_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.projects
    ADD CONSTRAINT projects_org_id_fkey FOREIGN KEY (org_id) REFERENCES public.orgs(id);


--
-- Name: projects projects_workspace_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.projects
    ADD CONSTRAINT projects_workspace_id_fkey FOREIGN KEY (workspace_id) REFERENCES public.workspaces(id);


--
-- Name: runtimes runtimes_org_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.runtimes
    ADD CONSTRAINT runtimes_org_id_fkey FOREIGN KEY (org_id) REFERENCES public.orgs(id);


--
-- Name: runtimes runtimes_project_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.runtimes
    ADD CONSTRAINT runtimes_project_id_fkey FOREIGN KEY (project_id) REFERENCES public.projects(id);


--
-- Name: runtimes runtimes_workspace_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.runtimes
    ADD CONSTRAINT runtimes_workspace_id_fkey FOREIGN KEY (workspace_id) REFERENCES public.workspaces(id);


--
-- Name: sandboxes sandboxes_org_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.sandboxes
    ADD CONSTRAINT sandboxes_org_id_fkey FOREIGN KEY (org_id) REFERENCES public.orgs(id);


--
-- Name: secrets secrets_org_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.secrets
    ADD CONSTRAINT secrets_org_id_fkey FOREIGN KEY (org_id) REFERENCES public.orgs(id);


--
-- Name: session_events session_events_session_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.session_events
    ADD CONSTRAINT session_events_session_id_fkey FOREIGN KEY (session_id) REFERENCES public.sessions(id) ON DELETE CASCADE;


--
-- Name: sessions sessions_org_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.sessions
    ADD CONSTRAINT sessions_org_id_fkey FOREIGN KEY (org_id) REFERENCES public.orgs(id);


--
-- Name: sessions sessions_runtime_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.sessions
    ADD CONSTRAINT sessions_runtime_id_fkey FOREIGN KEY (runtime_id) REFERENCES public.runtimes(id) ON DELETE CASCADE;


--
-- Name: ssh_keys ssh_keys_api_key_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.ssh_keys
    ADD CONSTRAINT ssh_keys_api_key_id_fkey FOREIGN KEY (api_key_id) REFERENCES public.api_keys(id) ON DELETE CASCADE;


--
-- Name: ssh_keys ssh_keys_org_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.ssh_keys
    ADD CONSTRAINT ssh_keys_org_id_fkey FOREIGN KEY (org_id) REFERENCES public.orgs(id) ON DELETE CASCADE;


--
-- Name: ssh_keys ssh_keys_user_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.ssh_keys
    ADD CONSTRAINT ssh_keys_user_id_fkey FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;


--
-- Name: ssh_keys ssh_keys_workspace_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.ssh_keys
    ADD CONSTRAINT ssh_keys_workspace_id_fkey FOREIGN KEY (workspace_id) REFERENCES public.workspaces(id) ON DELETE CASCADE;


--
-- Name: workspace_members workspace_members_new_org_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.workspace_members
    ADD CONSTRAINT workspace_members_new_org_id_fkey FOREIGN KEY (org_id) REFERENCES public.orgs(id);


--
-- Name: workspace_members workspace_members_new_user_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.workspace_members
    ADD CONSTRAINT workspace_members_new_user_id_fkey FOREIGN KEY (user_id) REFERENCES public.users(id) ON DELETE CASCADE;


--
-- Name: workspace_members workspace_members_new_workspace_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.workspace_members
    ADD CONSTRAINT workspace_members_new_workspace_id_fkey FOREIGN KEY (workspace_id) REFERENCES public.workspaces(id);


--
-- Name: workspaces workspaces_org_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.workspaces
    ADD CONSTRAINT workspaces_org_id_fkey FOREIGN KEY (org_id) REFERENCES public.orgs(id);


--
-- PostgreSQL database dump complete
--



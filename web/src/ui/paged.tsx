// A list the API answers a page at a time (next_cursor): the first page
// loads with the page and again when its filters change; "More" appends
// the next one.
import type { ComponentChildren } from "preact";
import { useEffect, useState } from "preact/hooks";
import { failed, type ApiError } from "../api/client";
import { Button, Empty, ErrorNote, useAsync } from "./index";

export type PageOf<T> = { items?: T[]; next_cursor?: string };

export type Paged<T> = {
  items: T[];
  next: string;
  loading: boolean;
  error?: ApiError;
  // paged says the reader fetched more than the first page.
  paged: boolean;
  more: () => Promise<void>;
  reload: () => void;
};

// usePaged loads pages of load(cursor); deps are the filters.
export function usePaged<T>(load: (cursor: string) => Promise<PageOf<T>>, deps: unknown[]): Paged<T> {
  const first = useAsync(() => load(""), deps);
  const [extra, setExtra] = useState<{ items: T[]; next: string } | null>(null);
  const [moreError, setMoreError] = useState<ApiError | undefined>();
  useEffect(() => {
    setExtra(null);
    setMoreError(undefined);
  }, [first.data]);
  const items = [...(first.data?.items ?? []), ...(extra?.items ?? [])];
  const next = extra ? extra.next : (first.data?.next_cursor ?? "");
  const more = async () => {
    if (!next) return;
    try {
      const p = await load(next);
      setExtra({ items: [...(extra?.items ?? []), ...(p.items ?? [])], next: p.next_cursor ?? "" });
    } catch (e) {
      setMoreError(failed(e));
    }
  };
  return { items, next, loading: first.loading, error: first.error ?? moreError, paged: extra !== null, more, reload: first.reload };
}

// MoreButton fetches the next page while there is one.
function MoreButton({ list, label }: { list: Paged<unknown>; label: string }) {
  if (!list.next) return null;
  return (
    <p>
      <Button onClick={list.more} aria-label={"More " + label}>
        More
      </Button>
    </p>
  );
}

// PagedList shows a paged list: its error, what children make of the
// items so far, a note when there are none, and "More" (named "More "
// + label) while there is a next page.
export function PagedList<T>(props: { list: Paged<T>; label: string; empty: ComponentChildren; children: (items: T[]) => ComponentChildren }) {
  const { list } = props;
  return (
    <>
      <ErrorNote error={list.error} />
      {list.items.length > 0 && props.children(list.items)}
      {!list.loading && list.items.length === 0 && !list.error && <Empty>{props.empty}</Empty>}
      <MoreButton list={list} label={props.label} />
    </>
  );
}

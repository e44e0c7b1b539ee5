// Lists and tables: a loaded list with its error and its empty note, and
// a labelled table with its column heads, in a wrapper that scrolls
// sideways on a narrow window.
import type { ComponentChildren } from "preact";
import { type Async, Empty, ErrorNote } from "./index";

// Listed shows a loaded list: its error, a note when it is empty, or what
// children make of its items.
export function Listed<T>({ list, empty, children }: { list: Async<T[]>; empty: ComponentChildren; children: (items: T[]) => ComponentChildren }) {
  return (
    <>
      <ErrorNote error={list.error} />
      {list.data && list.data.length === 0 && <Empty>{empty}</Empty>}
      {list.data && list.data.length > 0 && children(list.data)}
    </>
  );
}

// Table is a table named label with a head row of cols (a false one is
// left out) and children as its body's rows; after follows the table in
// its wrapper.
export function Table(props: { label: string; cols: (string | false)[]; class?: string; caption?: ComponentChildren; after?: ComponentChildren; children?: ComponentChildren }) {
  return (
    <div class="table-wrap">
      <table class={props.class} aria-label={props.label}>
        {props.caption !== undefined && <caption>{props.caption}</caption>}
        <thead>
          <tr>
            {props.cols.map((c) => c !== false && <th scope="col">{c}</th>)}
          </tr>
        </thead>
        <tbody>{props.children}</tbody>
      </table>
      {props.after}
    </div>
  );
}

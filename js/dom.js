// DOM helpers: the only way the inspector creates nodes.
//
// Safety rule: every piece of content (prompts, tool results, state, errors) goes into the page
// through text nodes and attribute values. Nothing is ever parsed as HTML.

/** An element with attributes (``on*`` are listeners) and children (strings become text). */
export function h(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name === "class") node.className = value;
    else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value === true ? "" : String(value));
  }
  append(node, children);
  return node;
}

export function append(node, children) {
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.appendChild(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

export function clear(node) {
  while (node.firstChild) node.removeChild(node.firstChild);
}

/** Set an attribute, or remove it for null / undefined / false. */
export function attr(node, name, value) {
  if (value === null || value === undefined || value === false) node.removeAttribute(name);
  else node.setAttribute(name, value === true ? "" : String(value));
}

export function empty(text) {
  return h("div", { class: "anb-empty" }, text);
}

/**
 * A <details> whose open/closed state outlives redraws: ``view.open`` / ``view.closed`` remember
 * what the user chose under ``key``. ``fill`` builds the body the first time it opens (so a
 * closed node costs nothing).
 */
export function disclosure(view, key, { attrs = {}, open: openByDefault = false, summary, fill }) {
  const open = view.open.has(key) || (openByDefault && !view.closed.has(key));
  const details = h("details", Object.assign({}, attrs, { open }), summary);
  let built = false;
  const build = () => {
    if (built) return;
    built = true;
    append(details, [fill()]);
  };
  if (open) build();
  details.addEventListener("toggle", () => {
    if (details.open) {
      view.open.add(key);
      view.closed.delete(key);
      build();
    } else {
      view.open.delete(key);
      view.closed.add(key);
    }
  });
  return details;
}

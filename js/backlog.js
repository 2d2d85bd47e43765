// What a widget's model receives before a view exists (index.js's initialize), for the view to
// replay on top of the trait's snapshot.

import { decodeMessage, traitSeq } from "./message.js";
import { WIRE } from "./wire.js";

/**
 * The batches a model receives after its trait's snapshot, kept from the moment the model exists
 * (anywidget's ``initialize``), so a view created later — its output arrives while the next cell
 * already runs — replays them instead of finding a gap. Bounded: past ``limit`` batches it gives
 * up, and a view falls back to a sync.
 */
export function createBacklog(model, { limit = 5000 } = {}) {
  let messages = []; // [content, buffers]: parsed only if a view replays them
  let overflow = false;
  const seq = () => traitSeq(model.get(WIRE.TRAIT_SNAPSHOT));
  const onMessage = (msg, buffers) => {
    if (overflow || !msg || msg[WIRE.KIND] !== WIRE.BATCH) return;
    if (messages.length >= limit) {
      overflow = true;
      messages = [];
      return;
    }
    messages.push([msg, buffers]);
  };
  const onTrait = () => {
    const covered = seq();
    messages = messages.filter(([msg]) => msg[WIRE.LAST] > covered);
    overflow = false;
  };
  model.on("msg:custom", onMessage);
  model.on("change:" + WIRE.TRAIT_SNAPSHOT, onTrait);
  return {
    messages: () => (overflow ? [] : messages.filter(([msg]) => msg[WIRE.LAST] > seq()).map(([msg, buffers]) => decodeMessage(msg, buffers))),
    dispose: () => {
      model.off("msg:custom", onMessage);
      model.off("change:" + WIRE.TRAIT_SNAPSHOT, onTrait);
    },
  };
}

/**
 * The store conformance suite against the in-memory layer. It lives in one
 * process, so the tests with writers in other processes do not apply; each
 * test runs against one fresh store.
 *
 * @module
 */
import { layerMemoryStore } from "@palimpsest/session";
import { storeConformance } from "./conformance.ts";

storeConformance({ name: "layerMemoryStore", layer: () => layerMemoryStore() });

//! Test support shared by the WASM tests (`tests/wasm.rs`) and their native twin
//! (`tests/in_memory.rs`): a small wiki written inline, an in-memory [`ShardStore`], and a
//! blocking executor for the core's async reader APIs.
//!
//! Nothing here touches the file system, the clock or the network, so the same code runs in
//! `wasm32-unknown-unknown` under Node, in `wasm32-wasip2` and natively.

use std::future::Future;
use std::sync::Arc;

use wikantik::compile::{compile, CompileOptions, CompiledIndex, SourcePage};
use wikantik::reader::{IndexReader, ShardCache};
use wikantik::Result;

/// Run a future to completion on the current thread.
///
/// The in-memory store answers every request immediately, so the futures of the core never
/// return `Pending` and `pollster` never has to park the thread (which wasm32-unknown-unknown
/// without atomics could not do), so the tests stay synchronous functions inside WASM too
/// and need no JS promise plumbing.
pub fn block_on<F: Future>(future: F) -> F::Output {
    pollster::block_on(future)
}

/// The in-memory store of the core, with the two helpers these tests need.
pub use wikantik::reader::MemoryStore as MemStore;

/// Test helpers on [`MemStore`].
pub trait MemStoreExt {
    /// Flip one bit in the middle of object `name` (which must exist).
    fn flip_byte(&mut self, name: &str);
    /// A reader over a copy of this store with a fresh cache.
    fn reader(&self) -> Result<IndexReader<MemStore>>;
}

impl MemStoreExt for MemStore {
    fn flip_byte(&mut self, name: &str) {
        let mut bytes = self.object(name).unwrap_or_else(|| panic!("no object {name}")).to_vec();
        let middle = bytes.len() / 2;
        bytes[middle] ^= 0x40;
        self.put(name, bytes);
    }

    fn reader(&self) -> Result<IndexReader<MemStore>> {
        block_on(IndexReader::open(self.clone(), Arc::new(ShardCache::default())))
    }
}

/// Canonical ids authored in the fixture (valid ULIDs).
pub mod ids {
    pub const GREENHOUSE_HUB: &str = "01JGH0B5Q8W7D3N6K2M4T9XRVA";
    pub const IRRIGATION_HUB: &str = "01JGH0C6R9X8E4P7M3N5V0YSWB";
    pub const DRIP_IRRIGATION: &str = "01JGH0D7S0Y9F5Q8N4P6W1ZTXC";
    pub const SEED_STARTING: &str = "01JGH0E8T1Z0G6R9P5Q7X2A0YD";
    pub const PEST_CONTROL: &str = "01JGH0F9V2A1H7S0Q6R8Y3B1ZE";
    pub const COMPOST_TEMPERATURE: &str = "01JGH0GAW3B2J8T1R7S9Z4C20F";
    pub const VOLUNTEER_ROTA: &str = "01JGH0HBX4C3K9V2S8T0A5D31G";
}

/// The fixture: eight pages of a community greenhouse wiki.
///
/// * clusters `greenhouse` (hub `Greenhouse Hub`), its sub-cluster `greenhouse/irrigation`
///   (hub `IrrigationHub`) and the headless `compost`;
/// * `DripIrrigation` names two clusters (primary first) and pins `version: 4` in frontmatter;
///   the other pages take their version from `git_version`;
/// * `VolunteerRota` is restricted to `Coordinators` (view) and `Admin`; `Glossary` is public
///   but only `Admin` may edit it, and it has no `canonical_id` (a derived one is used);
/// * wikilinks in both syntaxes (`[Page]()` and `[text](Page#anchor)`), a `related:` list,
///   and one `cite://` citation from `CompostTemperature` to a section of `DripIrrigation`.
pub fn sample_pages() -> Vec<SourcePage> {
    let page = |file_name: &str, git_version: u32, text: &str| SourcePage {
        file_name: file_name.to_string(),
        text: text.to_string(),
        git_version: Some(git_version),
        updated: 1_790_000_000 + i64::from(git_version) * 86_400,
    };
    vec![
        page("Greenhouse+Hub.md", 2, GREENHOUSE_HUB),
        page("IrrigationHub.md", 1, IRRIGATION_HUB),
        page("DripIrrigation.md", 7, DRIP_IRRIGATION),
        page("SeedStarting.md", 3, SEED_STARTING),
        page("PestControl.md", 5, PEST_CONTROL),
        page("CompostTemperature.md", 2, COMPOST_TEMPERATURE),
        page("VolunteerRota.md", 9, VOLUNTEER_ROTA),
        page("Glossary.md", 1, GLOSSARY),
    ]
}

/// [`sample_pages`] compiled with the default options.
pub fn compile_sample() -> CompiledIndex {
    compile(sample_pages(), &CompileOptions::default(), &mut |_, _, _| {}).expect("the fixture compiles")
}

/// [`compile_sample`] published into a fresh [`MemStore`].
pub fn sample_store() -> MemStore {
    MemStore::from_compiled(&compile_sample())
}

const GREENHOUSE_HUB: &str = r#"---
canonical_id: 01JGH0B5Q8W7D3N6K2M4T9XRVA
title: Greenhouse
type: hub
status: active
cluster: greenhouse
summary: Start here for everything that grows under glass at the Eastside community greenhouse.
tags: [greenhouse, hub]
---

# Greenhouse

The Eastside greenhouse is run by volunteers. These pages describe how we water, sow and
protect the plants, and who is on duty when.

- [DripIrrigation]() — how water reaches every bench.
- [SeedStarting]() — sowing trays and heat mats in late winter.
- [Pest control](PestControl) — what to do about aphids and whitefly.
- [IrrigationHub]() — the irrigation sub-cluster.
"#;

const IRRIGATION_HUB: &str = r#"---
canonical_id: 01JGH0C6R9X8E4P7M3N5V0YSWB
title: Irrigation
type: hub
status: active
cluster: greenhouse/irrigation
summary: The watering system of the greenhouse, from the rain barrels to the emitters.
---

# Irrigation

Water comes from two rain barrels and the mains as a fallback. See [DripIrrigation]() for
the lines themselves and [Greenhouse Hub]() for the rest of the greenhouse.
"#;

const DRIP_IRRIGATION: &str = r#"---
canonical_id: 01JGH0D7S0Y9F5Q8N4P6W1ZTXC
title: Drip irrigation
type: article
status: active
cluster:
  - greenhouse/irrigation
  - greenhouse
version: 4
summary: How the drip lines are laid out, how much each emitter delivers, and how to flush them.
tags: [watering, irrigation]
related: [SeedStarting]
---

# Drip irrigation

Every bench has its own drip line fed from the header pipe along the north wall. A timer
opens the valve twice a day; in a heat wave the afternoon run is doubled by hand.

## Emitters

Each emitter delivers two litres per hour at normal pressure. Tomatoes get two emitters per
plant, seedlings share one emitter per tray. Pressure-compensating emitters keep the flow even
from the first bench to the last.

## Flushing the lines

Sediment from the rain barrels clogs emitters within a month. Open the end caps, run the water
for five minutes until it comes out clear, then close the caps again. Do this on the first
Saturday of every month and after a storm.
"#;

const SEED_STARTING: &str = r#"---
canonical_id: 01JGH0E8T1Z0G6R9P5Q7X2A0YD
title: Seed starting
type: article
status: active
cluster: greenhouse
summary: Sowing seed trays in late winter, keeping them warm on heat mats, and pricking out.
tags: [sowing, seedlings]
---

# Seed starting

We sow peppers and aubergines in February and tomatoes in March, in trays of peat-free
compost from the [CompostTemperature]() heaps.

## Germination temperature

Peppers germinate best at twenty-five degrees, tomatoes at twenty. The heat mats have a
thermostat probe that sits in the compost of the middle tray; never leave a mat on without
its probe.

## Pricking out

When the first true leaves appear, lift each seedling by a leaf, never by the stem, and move
it into its own pot. Water the pots from below through the [drip line](DripIrrigation#Emitters).
"#;

const PEST_CONTROL: &str = r#"---
canonical_id: 01JGH0F9V2A1H7S0Q6R8Y3B1ZE
title: Pest control
type: runbook
status: active
cluster: greenhouse
summary: Recognising aphids and whitefly early and controlling them with ladybirds, not sprays.
tags: [pests, runbook]
---

# Pest control

We do not spray. Check the undersides of leaves on every visit and note what you see in the
logbook by the door.

## Aphids

Green or black aphids cluster on young shoots. Release ladybird larvae from the fridge box on
the affected bench; one pot of larvae covers a whole bench. Wipe heavy colonies off by hand.

## Whitefly

Hang yellow sticky traps above the tomatoes and replace them every fortnight. Whitefly thrive
in dry air, so damp the paths down on hot afternoons. Ask the [VolunteerRota]() coordinator
before ordering parasitic wasps.
"#;

const COMPOST_TEMPERATURE: &str = r#"---
canonical_id: 01JGH0GAW3B2J8T1R7S9Z4C20F
title: Compost temperature
type: reference
status: active
cluster: compost
summary: Target temperatures of the hot compost heaps and when to turn them.
tags: [compost]
---

# Compost temperature

A hot heap should reach fifty-five to sixty-five degrees within a week of building it. Push
the long thermometer into the centre of the heap and read it after one minute.

## Turning

Turn the heap when the core falls below forty degrees. A heap that never heats up is too dry
or too brown: add grass clippings and water it with the
[drip line rate](cite://01JGH0D7S0Y9F5Q8N4P6W1ZTXC/Drip%20irrigation/Emitters "Each emitter delivers two litres per hour at normal pressure")
in mind, about ten litres per barrow load.
"#;

const VOLUNTEER_ROTA: &str = r#"---
canonical_id: 01JGH0HBX4C3K9V2S8T0A5D31G
title: Volunteer rota
type: reference
status: active
cluster: greenhouse
summary: Who opens and closes the greenhouse each day, with the coordinators' phone tree.
tags: [people]
---

[{ALLOW view Coordinators}]()
[{ALLOW edit Admin}]()

# Volunteer rota

Only coordinators can read this page because it lists private phone numbers.

## Phone tree

The duty coordinator calls the morning opener by half past seven. If nobody answers, call the
deputy, then the chair. Never give a volunteer's number to a supplier.
"#;

const GLOSSARY: &str = r#"---
title: Glossary
type: reference
status: active
cluster:
  - compost
  - greenhouse
summary: Short definitions of the words used on the greenhouse and compost pages.
---

[{ALLOW view All}]()
[{ALLOW edit Admin}]()

# Glossary

| term | meaning |
|---|---|
| emitter | the nozzle that drips water onto one plant |
| pricking out | moving a seedling from its tray into a pot |
| brown material | dry, carbon-rich compost input such as cardboard and straw |

An ACL written in code is documentation, not a rule: `[{ALLOW view Nobody}]`.
"#;

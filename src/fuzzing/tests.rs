//! Every fuzz target over its committed corpus (`fuzz/corpus/NAME`: seeds and every input that
//! once crashed it), then over mutations of the corpus from a fixed seed: a short, repeatable
//! fuzz run on every `cargo test`, without an engine.

use super::TARGETS;
use std::path::PathBuf;

/// Mutated inputs per target: about a second of the three targets together on the CI machine.
const MUTATIONS: usize = 300;

/// The committed corpus of `target`.
fn corpus(target: &str) -> Vec<Vec<u8>> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/corpus")
        .join(target);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.expect("a corpus entry").path())
        .collect();
    files.sort();
    files
        .iter()
        .map(|f| std::fs::read(f).expect("a corpus file"))
        .collect()
}

/// xorshift64: mutations that are the same on every run.
struct Draw(u64);

impl Draw {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// One mutation of `input`, as libFuzzer's simplest do: a byte changed, inserted, removed or
/// duplicated, a span cut, or an interesting token spliced in.
fn mutate(input: &[u8], draw: &mut Draw) -> Vec<u8> {
    const TOKENS: &[&[u8]] = &[
        b"{",
        b"}",
        b"[",
        b"]",
        b"\"",
        b":",
        b",",
        b"null",
        b"1e999",
        b"-0",
        b"\\u0000",
        b"\"id\":",
        b"\"method\":",
        b"\"params\":",
        b"\"_meta\":",
        b"\xff",
        b"\n",
        b"{\"a\":{\"a\":{\"a\":[[[[",
        b"18446744073709551616",
    ];
    let mut out = input.to_vec();
    for _ in 0..=draw.below(4) {
        let at = draw.below(out.len() + 1);
        match draw.below(5) {
            0 if at < out.len() => out[at] = draw.next() as u8,
            1 => out.insert(at, draw.next() as u8),
            2 if at < out.len() => {
                out.remove(at);
            }
            3 => {
                let end = (at + draw.below(16)).min(out.len());
                out.drain(at..end);
            }
            _ => {
                let token = TOKENS[draw.below(TOKENS.len())];
                out.splice(at..at, token.iter().copied());
            }
        }
    }
    out
}

#[test]
fn every_target_survives_its_corpus_and_mutations_of_it() {
    for (name, target) in TARGETS {
        let started = std::time::Instant::now();
        let seeds = corpus(name);
        assert!(!seeds.is_empty(), "fuzz/corpus/{name} is empty");
        for seed in &seeds {
            target(seed);
        }
        let mut draw = Draw(0x9e37_79b9_7f4a_7c15 ^ name.len() as u64);
        for _ in 0..MUTATIONS {
            let seed = &seeds[draw.below(seeds.len())];
            target(&mutate(seed, &mut draw));
        }
        eprintln!("{name}: {:?}", started.elapsed());
    }
}

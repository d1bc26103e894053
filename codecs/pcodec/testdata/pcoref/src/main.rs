// pcoref: compresses raw little-endian numbers from stdin with pco's
// standalone format, or decompresses, for gozarr's pcodec tests.
//   pcoref c TYPE LEVEL MODE DELTA PAGE_N  (MODE auto|classic|dict; DELTA auto|noop|consecutive:N|lookback|conv1:N)
//   pcoref d TYPE
use pco::standalone::{simple_compress, simple_decompress};
use pco::{ChunkConfig, DeltaSpec, ModeSpec, PagingSpec};
use std::io::{Read, Write};

macro_rules! run {
    ($t:ty, $w:expr, $op:expr, $input:expr, $cfg:expr) => {{
        let w = $w;
        if $op == "c" {
            let nums: Vec<$t> = $input.chunks_exact(w).map(|b| <$t>::from_le_bytes(b.try_into().unwrap())).collect();
            simple_compress(&nums, &$cfg).expect("compress")
        } else {
            let nums: Vec<$t> = simple_decompress(&$input).expect("decompress");
            nums.iter().flat_map(|x| x.to_le_bytes()).collect()
        }
    }};
}

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let mut input = Vec::new();
    std::io::stdin().read_to_end(&mut input).unwrap();
    let mut cfg = ChunkConfig::default();
    if a[1] == "c" {
        cfg = cfg.with_compression_level(a[3].parse().unwrap());
        cfg = cfg.with_mode_spec(match a[4].as_str() { "classic" => ModeSpec::Classic, "dict" => ModeSpec::TryDict, _ => ModeSpec::Auto });
        let d = a[5].as_str();
        cfg = cfg.with_delta_spec(if d == "noop" { DeltaSpec::NoOp } else if d == "lookback" { DeltaSpec::TryLookback }
            else if let Some(n) = d.strip_prefix("consecutive:") { DeltaSpec::TryConsecutive(n.parse().unwrap()) }
            else if let Some(n) = d.strip_prefix("conv1:") { DeltaSpec::TryConv1(n.parse().unwrap()) }
            else { DeltaSpec::Auto });
        cfg = cfg.with_paging_spec(PagingSpec::EqualPagesUpTo(a[6].parse().unwrap()));
        cfg = cfg.with_enable_8_bit(true);
    }
    let op = a[1].as_str();
    let out: Vec<u8> = match a[2].as_str() {
        "u8" => run!(u8, 1, op, input, cfg),
        "i8" => run!(i8, 1, op, input, cfg),
        "u16" => run!(u16, 2, op, input, cfg),
        "i16" => run!(i16, 2, op, input, cfg),
        "f16" => run!(half::f16, 2, op, input, cfg),
        "u32" => run!(u32, 4, op, input, cfg),
        "i32" => run!(i32, 4, op, input, cfg),
        "f32" => run!(f32, 4, op, input, cfg),
        "u64" => run!(u64, 8, op, input, cfg),
        "i64" => run!(i64, 8, op, input, cfg),
        "f64" => run!(f64, 8, op, input, cfg),
        t => panic!("type {}", t),
    };
    std::io::stdout().write_all(&out).unwrap();
}

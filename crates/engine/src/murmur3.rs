//! MurmurHash3, the hashes Elasticsearch and Lucene use: the x64 128-bit variant (ingest's
//! `fingerprint`) and the x86 32-bit one (slices by `_id`), from Austin Appleby's reference.

/// MurmurHash3, x64 128-bit variant (Austin Appleby's reference), as Lucene and Elasticsearch use.
pub fn x64_128(data: &[u8], seed: u64) -> (u64, u64) {
    const C1: u64 = 0x87c3_7b91_1142_53d5;
    const C2: u64 = 0x4cf5_ad43_2745_937f;
    let (mut h1, mut h2) = (seed, seed);
    let blocks = data.chunks_exact(16);
    let tail = blocks.remainder();
    for b in blocks {
        let k1 = u64::from_le_bytes(b[..8].try_into().unwrap_or_default());
        let k2 = u64::from_le_bytes(b[8..].try_into().unwrap_or_default());
        h1 ^= k1.wrapping_mul(C1).rotate_left(31).wrapping_mul(C2);
        h1 = h1
            .rotate_left(27)
            .wrapping_add(h2)
            .wrapping_mul(5)
            .wrapping_add(0x52dc_e729);
        h2 ^= k2.wrapping_mul(C2).rotate_left(33).wrapping_mul(C1);
        h2 = h2
            .rotate_left(31)
            .wrapping_add(h1)
            .wrapping_mul(5)
            .wrapping_add(0x3849_5ab5);
    }
    let (mut k1, mut k2) = (0u64, 0u64);
    for (i, &byte) in tail.iter().enumerate() {
        if i < 8 {
            k1 ^= u64::from(byte) << (8 * i);
        } else {
            k2 ^= u64::from(byte) << (8 * (i - 8));
        }
    }
    if tail.len() > 8 {
        h2 ^= k2.wrapping_mul(C2).rotate_left(33).wrapping_mul(C1);
    }
    if !tail.is_empty() {
        h1 ^= k1.wrapping_mul(C1).rotate_left(31).wrapping_mul(C2);
    }
    let len = data.len() as u64;
    h1 ^= len;
    h2 ^= len;
    h1 = h1.wrapping_add(h2);
    h2 = h2.wrapping_add(h1);
    h1 = fmix(h1);
    h2 = fmix(h2);
    h1 = h1.wrapping_add(h2);
    h2 = h2.wrapping_add(h1);
    (h1, h2)
}

fn fmix(mut k: u64) -> u64 {
    k ^= k >> 33;
    k = k.wrapping_mul(0xff51_afd7_ed55_8ccd);
    k ^= k >> 33;
    k = k.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    k ^ (k >> 33)
}

/// MurmurHash3's x86 32-bit variant.
pub fn x86_32(data: &[u8], seed: u32) -> u32 {
    const C1: u32 = 0xcc9e_2d51;
    const C2: u32 = 0x1b87_3593;
    let mut h = seed;
    let mut chunks = data.chunks_exact(4);
    for chunk in &mut chunks {
        let mut k = u32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
        k = k.wrapping_mul(C1).rotate_left(15).wrapping_mul(C2);
        h ^= k;
        h = h.rotate_left(13).wrapping_mul(5).wrapping_add(0xe654_6b64);
    }
    let tail = chunks.remainder();
    let mut k = 0u32;
    for (i, b) in tail.iter().enumerate() {
        k |= u32::from(*b) << (8 * i);
    }
    if !tail.is_empty() {
        h ^= k.wrapping_mul(C1).rotate_left(15).wrapping_mul(C2);
    }
    h ^= data.len() as u32;
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^ (h >> 16)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn murmur3_matches_the_reference_vectors() {
        // MurmurHash3_x64_128 outputs (seed 0) as two little-endian halves, as PyPI's mmh3 gives.
        assert_eq!(x64_128(b"", 0), (0, 0));
        assert_eq!(
            x64_128(b"hello", 0),
            (0xcbd8_a7b3_41bd_9b02, 0x5b1e_906a_48ae_1d19)
        );
        assert_eq!(
            x64_128(b"The quick brown fox jumps over the lazy dog", 0),
            (0xe34b_bc7b_bc07_1b6c, 0x7a43_3ca9_c49a_9347)
        );
        // A full 16-byte block and a tail (checked with PyPI's mmh3).
        assert_eq!(
            x64_128(b"0123456789abcdefXYZ", 0),
            (0x99d3_7502_6c4a_901d, 0x4e69_e256_eaf8_9cf3)
        );
    }

    #[test]
    fn murmur3_gives_the_reference_values() {
        // The algorithm's published test vectors.
        assert_eq!(x86_32(b"", 0), 0);
        assert_eq!(x86_32(b"", 1), 0x514e_28b7);
        assert_eq!(x86_32(b"hello", 0), 0x248b_fa47);
        assert_eq!(x86_32(b"Hello, world!", 1234), 0xfaf6_cdb3);
    }
}

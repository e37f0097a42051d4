//! Integers as text, for the formats' inner loops. `core::fmt` spends most of a txt
//! trace's time in `pad_integral` and its per-character writes (measured: ~70% of traceq's
//! work for a batch of traced draws); these append the digits in one `push_str`, with the
//! padding the formats need. Decimal digits come from `itoa`, the crate made for exactly
//! this (serde_json's).

/// Appends `v` in decimal.
#[inline]
pub fn push_u64(out: &mut String, v: u64) {
    out.push_str(itoa::Buffer::new().format(v));
}

/// Appends `v` in decimal.
#[inline]
pub fn push_i64(out: &mut String, v: i64) {
    out.push_str(itoa::Buffer::new().format(v));
}

/// Appends `v` in decimal, zero-padded to `width` digits (`{:0width$}`).
#[inline]
pub fn push_u64_zero_padded(out: &mut String, v: u64, width: usize) {
    let mut buf = itoa::Buffer::new();
    let digits = buf.format(v);
    push_repeated(out, b'0', width.saturating_sub(digits.len()));
    out.push_str(digits);
}

/// Appends `v` with its sign always shown, right-aligned in `width` characters
/// (`{:+width$}`).
#[inline]
pub fn push_signed_right_aligned(out: &mut String, v: i64, width: usize) {
    let mut buf = itoa::Buffer::new();
    let magnitude = buf.format(v.unsigned_abs());
    push_repeated(out, b' ', width.saturating_sub(magnitude.len() + 1));
    out.push(if v < 0 { '-' } else { '+' });
    out.push_str(magnitude);
}

/// Appends `v` as `0x` and lower-case hexadecimal digits (`{:#x}`).
#[inline]
pub fn push_hex(out: &mut String, v: u64) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut buf = [0u8; 18];
    let mut at = buf.len();
    let mut rest = v;
    loop {
        at -= 1;
        buf[at] = DIGITS[(rest & 0xf) as usize];
        rest >>= 4;
        if rest == 0 {
            break;
        }
    }
    at -= 2;
    buf[at] = b'0';
    buf[at + 1] = b'x';
    // The bytes are ASCII digits and "0x".
    out.push_str(std::str::from_utf8(&buf[at..]).unwrap_or_default());
}

/// Appends `n` copies of the ASCII byte `byte`.
#[inline]
pub fn push_repeated(out: &mut String, byte: u8, n: usize) {
    const SPACES: &str = "                                ";
    const ZEROS: &str = "00000000000000000000000000000000";
    let run = match byte {
        b' ' => SPACES,
        b'0' => ZEROS,
        _ => {
            (0..n).for_each(|_| out.push(char::from(byte)));
            return;
        }
    };
    let mut left = n;
    while left > 0 {
        let take = left.min(run.len());
        out.push_str(&run[..take]);
        left -= take;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(f: impl FnOnce(&mut String)) -> String {
        let mut out = String::from("<");
        f(&mut out);
        out
    }

    #[test]
    fn each_matches_the_format_it_replaces() {
        for v in [0u64, 1, 9, 10, 255, 4096, 1 << 40, u64::MAX] {
            assert_eq!(s(|o| push_u64(o, v)), format!("<{v}"));
            assert_eq!(s(|o| push_u64_zero_padded(o, v, 16)), format!("<{v:016}"));
            assert_eq!(s(|o| push_hex(o, v)), format!("<{v:#x}"));
        }
        for v in [
            0i64,
            1,
            -1,
            99,
            -99,
            123_456_789,
            -123_456_789,
            i64::MIN,
            i64::MAX,
        ] {
            assert_eq!(s(|o| push_i64(o, v)), format!("<{v}"));
            assert_eq!(
                s(|o| push_signed_right_aligned(o, v, 9)),
                format!("<{v:+9}")
            );
        }
        assert_eq!(
            s(|o| push_repeated(o, b' ', 70)),
            format!("<{}", " ".repeat(70))
        );
        assert_eq!(s(|o| push_repeated(o, b'-', 3)), "<---");
    }
}

//! A picture of what will be sent: a PNG of a form as filled, its secrets blanked.
//!
//! The form's region is read from the page (`inspect.js`'s `shotBox`), captured by the
//! browser, and then, in ferry's own bytes, every secret control (passwords, one-time codes,
//! card numbers, security codes, expiry dates) is painted over with one flat colour. The
//! blanking is done on the image, not in the page: a page script could see, or undo,
//! anything put into the page.
//!
//! Limits: at most [`MAX_WIDTH`] image pixels wide and [`MAX_PIXELS`] in all (a form larger
//! than that is drawn smaller), and at most [`MAX_BYTES`] of PNG (a larger one is drawn again
//! at half the scale, up to [`ATTEMPTS`] times; then there is no picture, and a warning says
//! why).

use crate::inspection::{Inspection, Region};
use ferry_browser::{BrowserError, Clip, Page};

/// The widest picture, in image pixels.
pub const MAX_WIDTH: f64 = 1280.0;
/// The largest picture, in image pixels.
pub const MAX_PIXELS: f64 = 4_000_000.0;
/// The largest PNG kept, in bytes.
pub const MAX_BYTES: usize = 2 << 20;
/// Captures tried before giving up on a picture over [`MAX_BYTES`].
const ATTEMPTS: usize = 3;
/// The colour secrets are blanked with (RGB).
pub const BLANK: [u8; 3] = [0x20, 0x20, 0x20];

/// A picture of a form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Screenshot {
    /// The PNG.
    pub png: Vec<u8>,
    /// Its width in pixels.
    pub width: u32,
    /// Its height in pixels.
    pub height: u32,
    /// How many controls were blanked.
    pub blanked: usize,
}

/// Why there is no picture.
#[derive(Debug, thiserror::Error)]
pub enum NoScreenshot {
    /// The form is inside a frame, or gone.
    #[error("no picture of a form inside a frame yet")]
    NotInMainFrame,
    /// The form has no size (hidden).
    #[error("the form takes no room on the page")]
    Empty,
    /// Still over the byte limit at the smallest scale tried.
    #[error("the picture stays over {MAX_BYTES} bytes")]
    TooLarge,
    /// The browser's PNG could not be read or written.
    #[error("the picture could not be processed: {0}")]
    Png(String),
    /// The browser failed.
    #[error(transparent)]
    Browser(#[from] BrowserError),
}

/// A picture of global form `form` as the page shows it now, secrets blanked.
pub(crate) async fn take(
    page: &Page,
    inspection: &Inspection,
    form: usize,
) -> Result<Screenshot, NoScreenshot> {
    let shot = inspection
        .shot_box(form)
        .await?
        .ok_or(NoScreenshot::NotInMainFrame)?;
    let region = shot.form;
    if region.width < 1.0 || region.height < 1.0 {
        return Err(NoScreenshot::Empty);
    }
    let mut scale = scale_for(region);
    for _ in 0..ATTEMPTS {
        let clip = Clip {
            x: region.x,
            y: region.y,
            width: region.width,
            height: region.height,
            scale,
        };
        let png = page.screenshot(clip).await?;
        let shot = blank(&png, region, &shot.secrets, scale)?;
        if shot.png.len() <= MAX_BYTES {
            return Ok(shot);
        }
        scale /= 2.0;
    }
    Err(NoScreenshot::TooLarge)
}

/// The scale that keeps `region` within [`MAX_WIDTH`] and [`MAX_PIXELS`] (never above 1).
fn scale_for(region: Region) -> f64 {
    let by_width = MAX_WIDTH / region.width;
    let by_area = (MAX_PIXELS / (region.width * region.height)).sqrt();
    by_width.min(by_area).min(1.0)
}

/// `png` (a capture of `form` at `scale`) with every one of `secrets` painted [`BLANK`].
fn blank(
    png: &[u8],
    form: Region,
    secrets: &[Region],
    scale: f64,
) -> Result<Screenshot, NoScreenshot> {
    let failed = |e: &dyn std::fmt::Display| NoScreenshot::Png(e.to_string());
    let mut reader = png::Decoder::new(std::io::Cursor::new(png))
        .read_info()
        .map_err(|e| failed(&e))?;
    let mut pixels = vec![
        0;
        reader
            .output_buffer_size()
            .ok_or_else(|| failed(&"no size"))?
    ];
    let info = reader.next_frame(&mut pixels).map_err(|e| failed(&e))?;
    let channels = info.color_type.samples();
    if info.bit_depth != png::BitDepth::Eight || channels < 3 {
        return Err(failed(&"an unexpected pixel format"));
    }
    let (width, height) = (info.width, info.height);
    let mut blanked = 0;
    for secret in secrets {
        let Some((x0, y0, x1, y1)) = pixel_box(*secret, form, scale, width, height) else {
            continue;
        };
        blanked += 1;
        for y in y0..y1 {
            for x in x0..x1 {
                let at = y as usize * info.line_size + x as usize * channels;
                pixels[at..at + 3].copy_from_slice(&BLANK);
            }
        }
    }
    let mut out = Vec::new();
    {
        let mut encoder = png::Encoder::new(&mut out, width, height);
        encoder.set_color(info.color_type);
        encoder.set_depth(png::BitDepth::Eight);
        let mut writer = encoder.write_header().map_err(|e| failed(&e))?;
        writer
            .write_image_data(&pixels[..info.line_size * height as usize])
            .map_err(|e| failed(&e))?;
    }
    Ok(Screenshot {
        png: out,
        width,
        height,
        blanked,
    })
}

/// `secret`'s pixels in a capture of `form` at `scale` (`width` × `height`), grown by a
/// pixel on each side (anti-aliased edges show no text either), clipped to the image; `None`
/// when it lies outside.
fn pixel_box(
    secret: Region,
    form: Region,
    scale: f64,
    width: u32,
    height: u32,
) -> Option<(u32, u32, u32, u32)> {
    let to_px = |v: f64, max: u32| (v * scale).clamp(0.0, f64::from(max)) as u32;
    let x0 = to_px(secret.x - form.x - 1.0, width);
    let y0 = to_px(secret.y - form.y - 1.0, height);
    let x1 = to_px(secret.x - form.x + secret.width + 1.0, width);
    let y1 = to_px(secret.y - form.y + secret.height + 1.0, height);
    (x1 > x0 && y1 > y0).then_some((x0, y0, x1, y1))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn region(x: f64, y: f64, width: f64, height: f64) -> Region {
        Region {
            x,
            y,
            width,
            height,
        }
    }

    #[test]
    fn large_forms_are_drawn_smaller_and_small_ones_at_their_size() {
        assert_eq!(scale_for(region(0.0, 0.0, 600.0, 800.0)), 1.0);
        let wide = scale_for(region(0.0, 0.0, 2560.0, 100.0));
        assert!((wide - 0.5).abs() < 1e-9, "{wide}");
        let tall = region(0.0, 0.0, 1000.0, 16_000.0);
        let scale = scale_for(tall);
        let pixels = tall.width * scale * tall.height * scale;
        assert!(pixels <= MAX_PIXELS + 1.0, "{pixels}");
    }

    #[test]
    fn a_secret_box_is_placed_relative_to_the_form_and_clipped() {
        let form = region(100.0, 1000.0, 400.0, 300.0);
        let secret = region(120.0, 1050.0, 200.0, 30.0);
        assert_eq!(
            pixel_box(secret, form, 1.0, 400, 300),
            Some((19, 49, 221, 81))
        );
        assert_eq!(
            pixel_box(secret, form, 0.5, 200, 150),
            Some((9, 24, 110, 40))
        );
        let outside = region(900.0, 1050.0, 50.0, 30.0);
        assert_eq!(pixel_box(outside, form, 1.0, 400, 300), None);
    }

    #[test]
    fn secrets_are_painted_over_in_the_bytes() {
        // A 4×2 white image; the secret covers its left half.
        let mut png = Vec::new();
        {
            let mut encoder = png::Encoder::new(&mut png, 4, 2);
            encoder.set_color(png::ColorType::Rgb);
            encoder.set_depth(png::BitDepth::Eight);
            let mut writer = encoder.write_header().expect("header");
            writer.write_image_data(&[255; 4 * 2 * 3]).expect("data");
        }
        let form = region(0.0, 0.0, 4.0, 2.0);
        let shot = blank(&png, form, &[region(1.0, 1.0, 0.5, 0.5)], 1.0).expect("blanked");
        assert_eq!((shot.width, shot.height, shot.blanked), (4, 2, 1));
        let mut reader = png::Decoder::new(std::io::Cursor::new(shot.png))
            .read_info()
            .expect("a PNG");
        let mut pixels = vec![0; reader.output_buffer_size().expect("size")];
        reader.next_frame(&mut pixels).expect("frame");
        assert_eq!(&pixels[0..3], &BLANK, "the secret's corner");
        assert_eq!(&pixels[9..12], &[255, 255, 255], "the right edge stays");
    }
}

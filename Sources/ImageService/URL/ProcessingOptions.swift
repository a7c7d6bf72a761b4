import ImageCodec

/// What a processing URL asks for, parsed from imgproxy's options (see `OptionParser`) and
/// held in one canonical form: two URLs that spell the same request differently
/// (`rs:fill:400:400` and `resize:fill:400:400:0`) have equal options, and so one cache key.
public struct ProcessingOptions: Sendable, Hashable {
    /// imgproxy's resizing types, mapped onto the codec's modes.
    public enum ResizingType: String, Sendable, Hashable, CaseIterable {
        /// The codec's `fit`: inside the box, aspect kept.
        case fit
        /// The codec's `fill`: exactly the box, cropped by the gravity.
        case fill
        /// The codec's `fillDown`: as fill, but a smaller source is only cropped
        /// to the box's aspect ratio, never enlarged (`enlarge` has no effect).
        case fillDown = "fill-down"
        /// The codec's `force`: exactly the box, aspect not kept.
        case force
        /// `fill` when the source and the box have the same orientation (a square matches
        /// either), else `fit`.
        case auto
    }

    /// An output format the service writes.
    public enum OutputFormat: String, Sendable, Hashable, CaseIterable {
        /// JPEG at the request's quality (`q:`), or the service's default.
        case jpeg
        /// PNG: lossless, keeps alpha.
        case png
        /// Lossy WebP at the request's quality, or the service's WebP default; keeps alpha.
        case webp
        /// AVIF at the request's quality, or the service's AVIF default; keeps alpha.
        case avif

        /// The `Content-Type` of the format.
        public var contentType: String { codecFormat.mimeType }

        /// The file name extension of the format (`jpg` for JPEG).
        public var fileExtension: String { self == .jpeg ? "jpg" : rawValue }

        /// The codec's name for the format.
        public var codecFormat: ImageFormat {
            switch self {
            case .jpeg: .jpeg
            case .png: .png
            case .webp: .webp
            case .avif: .avif
            }
        }
    }

    /// How the source is fitted to the box (`rt:`, or the first argument of `rs:`).
    public var resizingType: ResizingType = .fit
    /// Box width in pixels before `dpr`; 0: by the height (both 0: no resize).
    public var width = 0
    /// Box height in pixels before `dpr`; 0: by the width.
    public var height = 0
    /// Whether fit and fill may scale a source smaller than the box up (`el:`).
    public var enlarge = false
    /// What a fill keeps when it crops (`g:`).
    public var gravity: Gravity = .centre
    /// `g:`'s offsets as imgproxy writes them: inward from the edge the gravity names
    /// (rightward and downward for the centre), output pixels before `dpr`, or a fraction of
    /// the side below 1.
    public var gravityOffset = GravityOffset.zero
    /// The part of the image kept before resizing (`c:`), in the frame of the output (after
    /// `rot:`); the box, `rt:auto` and the fill's gravity then apply to that part.
    public var crop: CropRegion?
    /// Device pixel ratio: the box is multiplied by it.
    public var dpr = 1.0
    /// The least width and height the source is scaled to (`mw:`, `mh:`), before `dpr`; the
    /// result is then cropped to the box. 0: none.
    public var minWidth = 0
    /// See `minWidth`.
    public var minHeight = 0
    /// Zoom (`z:`): multiplies the box, and the scale with it, per axis after `dpr`; the
    /// minimum sizes are not zoomed. Different zooms per axis stretch the image, which only
    /// `fit` and `force` can do.
    public var zoom = Zoom(x: 1, y: 1)
    /// A zoom per axis.
    public struct Zoom: Sendable, Hashable {
        /// Horizontal factor, in (0, ``ProcessingOptions/maxZoom``].
        public var x: Double
        /// Vertical factor.
        public var y: Double

        /// A zoom of `x` horizontally and `y` vertically.
        public init(x: Double, y: Double) {
            self.x = x
            self.y = y
        }
    }
    /// The largest zoom a URL may ask for: the box it makes is checked against the output limit.
    public static let maxZoom = 100.0
    /// JPEG quality 1-100; nil: the service's default.
    public var quality: Int?
    /// nil: JPEG, or PNG when the source has alpha.
    public var format: OutputFormat?
    /// The most bytes the answer may have (`mb:`): JPEG is fitted by the upload budget's
    /// search (quality, then a smaller size if needed), WebP and AVIF by their quality; an
    /// output that cannot fit is a 422. nil: no cap.
    public var maxBytes: Int?
    /// Quality per output format (`fq:`), used when the URL names no `q:`.
    public var formatQuality: [OutputFormat: Int] = [:]
    /// Part of the cache key and nothing else: changing it forces a fresh result.
    public var cacheBuster: String?
    /// The name in `Content-Disposition` (`fn:`), without extension; nil: the source's.
    public var filename: String?
    /// `Content-Disposition: attachment` instead of `inline` (`att:`): browsers save the file.
    public var returnsAttachment = false
    /// Unix time after which the URL answers 410.
    public var expires: Int?
    /// Clockwise rotation after the EXIF orientation (`rot:`): 0, 90, 180 or 270. The box
    /// and the gravity refer to the rotated image, as in imgproxy.
    public var rotation = 0
    /// Whether the EXIF orientation is applied (`ar:`, by default yes).
    public var autoRotates = true
    /// Convert to sRGB and write no colour profile (`scp:1`, the default, as imgproxy's
    /// `IMGPROXY_STRIP_COLOR_PROFILE`); `scp:0` keeps the source's colour space and profile.
    public var stripsColorProfile = true
    /// Write no EXIF but what `keepsCopyright` keeps (`sm:1`, the default, as imgproxy's
    /// `IMGPROXY_STRIP_METADATA`); `sm:0` carries the source's whole EXIF block, its
    /// orientation set upright (the pixels are).
    public var stripsMetadata = true
    /// While stripping, keep the source's EXIF Artist and Copyright (`kcr:1`, the default, as
    /// imgproxy's `IMGPROXY_KEEP_COPYRIGHT`); `kcr:0` strips them too.
    public var keepsCopyright = true
    /// `eth:` (enforce_thumbnail) as asked: accepted, but the service never substitutes an
    /// embedded thumbnail for the image (it decodes the image at the scale the output needs),
    /// so it changes nothing.
    public var enforcesThumbnail = false
    /// Gaussian blur σ in pixels (`bl:`); nil: none.
    public var blur: Double?
    /// Unsharp-mask σ in pixels (`sh:`); nil: none.
    public var sharpen: Double?
    /// Pixelation block size (`pix:`); nil: none.
    public var pixelate: Int?
    /// Extend a result smaller than the box to the box (`ex:`, or the last argument of `rs:`
    /// and `s:`), placed by `extendGravity`.
    public var extend = false
    /// Where an extended result sits on the box.
    public var extendGravity: Gravity = .centre
    /// `extendGravity`'s offsets, as `gravityOffset` is written.
    public var extendOffset = GravityOffset.zero
    /// Extend the result to the box's aspect ratio (`exar:`), placed by
    /// `extendAspectRatioGravity`; `extend` wins when both are set.
    public var extendAspectRatio = false
    /// Where a result extended to the aspect ratio sits.
    public var extendAspectRatioGravity: Gravity = .centre
    /// `extendAspectRatioGravity`'s offsets, as `gravityOffset` is written.
    public var extendAspectRatioOffset = GravityOffset.zero
    /// Added around the result, in pixels before `dpr` (`pd:`, CSS order).
    public var padding = Canvas.Insets.zero
    /// What fills the added area and flattens alpha (`bg:`); nil: transparent where the format
    /// keeps alpha, the JPEG encoder's white otherwise.
    public var background: RGBColor?

    /// Borders cut off the source before anything else (`t:`), in the frame the EXIF
    /// orientation gives and before `rot:`; nil: none.
    public var trim: Trim?

    /// Source formats answered as they are, unprocessed (`skp:`), when the URL names no other
    /// output format: the source's own bytes, type and validators, never stored as a result.
    public var skipProcessing: Set<ImageFormat> = []

    /// Options with every default.
    public init() {}

    /// The longest box side a URL may name, before `dpr` (`w:`, `h:`, `rs:`, `s:`): checked
    /// where the URL is parsed (400 beyond), far above any output side the service allows.
    public static let maxSide = 65_535

    /// The box after `dpr`, rounded. Never traps: values set through the API beyond what a
    /// URL may say come out as `Int32.max` (answered 400 by the output-size check), negative
    /// ones as 0.
    public var box: (width: Int, height: Int) {
        (Self.scaled(width, by: dpr * zoom.x), Self.scaled(height, by: dpr * zoom.y))
    }

    /// A side scaled, at least 1 unless it was 0.
    private static func scaled(_ side: Int, by dpr: Double) -> Int {
        let value = (Double(side) * dpr).rounded()
        guard value.isFinite, value < Double(Int32.max) else { return Int(Int32.max) }
        return value >= 1 ? Int(value) : side > 0 && dpr > 0 ? 1 : 0
    }

    /// Whether the zoom stretches the image (different per axis).
    public var stretches: Bool { zoom.x != zoom.y }

    /// The resize for a source whose upright size is `sourceWidth × sourceHeight`: `auto`
    /// resolved, a zero side fitted by the other, both zero: none.
    public func resize(sourceWidth: Int, sourceHeight: Int) -> Resize? {
        // The box is the rotated image's: plan in the rotated frame, then turn the resize back
        // into the frame the decoder works in (the rotation comes after the decode). A crop
        // region is what the resize sees as the image.
        let quarter = rotation % 180 == 90
        var source = quarter ? (width: sourceHeight, height: sourceWidth) : (width: sourceWidth, height: sourceHeight)
        if let crop { source = crop.size(sourceWidth: source.width, sourceHeight: source.height) }
        guard let rotated = resizeInOutputFrame(sourceWidth: source.width, sourceHeight: source.height) else { return nil }
        return rotated.unrotated(by: rotation)
    }

    /// The crop region in the frame the decoder works in (before `rot:`).
    public var decodingRegion: CropRegion? { crop?.unrotated(by: rotation) }

    /// An offset written inward from `gravity`'s edge (imgproxy's way) as a move right and
    /// down: negated along an axis where the gravity holds the right or the bottom edge.
    static func directional(_ inward: GravityOffset, for gravity: Gravity) -> GravityOffset {
        let right: Set<Gravity> = [.east, .northEast, .southEast], bottom: Set<Gravity> = [.south, .southEast, .southWest]
        return GravityOffset(x: right.contains(gravity) ? -inward.x : inward.x, y: bottom.contains(gravity) ? -inward.y : inward.y)
    }

    /// An inward offset of `gravity` (as the URL writes it) as the move the codec takes in
    /// output pixels: directional, its pixels (1 and more) scaled by `dpr`, fractions as they are.
    private func outputMove(_ inward: GravityOffset, for gravity: Gravity) -> GravityOffset {
        let move = Self.directional(inward, for: gravity)
        func side(_ value: Double) -> Double { abs(value) < 1 ? value : value * dpr }
        return GravityOffset(x: side(move.x), y: side(move.y))
    }

    private func resizeInOutputFrame(sourceWidth: Int, sourceHeight: Int) -> Resize? {
        let (boxWidth, boxHeight) = box
        // The minimums scale with `dpr`, not with the zoom (imgproxy's order).
        let (minimumWidth, minimumHeight) = (Self.scaled(minWidth, by: dpr), Self.scaled(minHeight, by: dpr))
        let minimums = minimumWidth > 0 || minimumHeight > 0
        guard boxWidth > 0 || boxHeight > 0 || minimums else { return nil }
        // A zero side fits by the other; fill-down still never enlarges.
        if boxWidth == 0 || boxHeight == 0 {
            if stretches { return stretchedFit(sourceWidth: sourceWidth, sourceHeight: sourceHeight) }
            return Resize(
                mode: .fit, width: boxWidth, height: boxHeight, gravity: gravity, enlarge: enlarge && resizingType != .fillDown,
                minimumWidth: minimumWidth, minimumHeight: minimumHeight, offset: outputMove(gravityOffset, for: gravity))
        }
        let mode: Resize.Mode =
            switch resizingType {
            case .fit: .fit
            case .fill: .fill
            case .fillDown: .fillDown
            case .force: .force
            case .auto:
                boxWidth == boxHeight || sourceWidth == sourceHeight || (boxWidth > boxHeight) == (sourceWidth > sourceHeight) ? .fill : .fit
            }
        if stretches && mode == .fit { return stretchedFit(sourceWidth: sourceWidth, sourceHeight: sourceHeight) }
        return Resize(
            mode: mode, width: boxWidth, height: boxHeight, gravity: gravity, enlarge: enlarge, minimumWidth: minimumWidth,
            minimumHeight: minimumHeight, offset: outputMove(gravityOffset, for: gravity))
    }

    /// A fit zoomed differently per axis: the fit of the unzoomed box, each axis then zoomed,
    /// and without `el:` scaled back until no axis is enlarged (imgproxy's order) — the exact
    /// size that makes, as a force. `ProcessingJob` refuses a stretch with a fill or a minimum.
    private func stretchedFit(sourceWidth: Int, sourceHeight: Int) -> Resize {
        let (source, sides) = ((Double(sourceWidth), Double(sourceHeight)), (Double(width) * dpr, Double(height) * dpr))
        let fit = min(sides.0 > 0 ? sides.0 / source.0 : .infinity, sides.1 > 0 ? sides.1 / source.1 : .infinity)
        var scale = (x: (fit.isFinite ? fit : 1) * zoom.x, y: (fit.isFinite ? fit : 1) * zoom.y)
        if !enlarge, max(scale.x, scale.y) > 1 { scale = (scale.x / max(scale.x, scale.y), scale.y / max(scale.x, scale.y)) }
        func side(_ value: Double) -> Int { value < Double(Int32.max) ? max(1, Int(value.rounded())) : Int(Int32.max) }
        return .force(width: side(source.0 * scale.x), height: side(source.1 * scale.y))
    }

    /// The filters in imgproxy's order (blur, sharpen, pixelate), on the resized and turned
    /// image, before the canvas.
    public var imageFilters: ImageFilters { ImageFilters(blur: blur, sharpen: sharpen, pixelate: pixelate) }

    /// What of the source's EXIF the output carries (`sm:`, `kcr:`).
    public var keptMetadata: KeptMetadata { stripsMetadata ? (keepsCopyright ? .copyright : .none) : .all }

    /// The turn, the filters and the canvas after the decode, as one `Finishing`.
    public var finishing: Finishing { Finishing(rotation: rotation, filters: imageFilters, canvas: canvas) }

    /// Whether the filters change anything.
    public var filters: Bool { !imageFilters.isIdentity }

    /// What goes around the resized result: the extension to the box (after `dpr`) or to its
    /// aspect ratio, the padding (scaled by `dpr`, as imgproxy scales it), the background.
    public var canvas: Canvas {
        let (boxWidth, boxHeight) = box
        let scale = { (side: Int) in Self.scaled(side, by: dpr) }
        var canvas = Canvas(
            padding: Canvas.Insets(top: scale(padding.top), right: scale(padding.right), bottom: scale(padding.bottom), left: scale(padding.left)),
            background: background)
        if extend {
            canvas.extend = .size(width: boxWidth, height: boxHeight)
            canvas.gravity = extendGravity
            canvas.offset = outputMove(extendOffset, for: extendGravity)
        } else if extendAspectRatio, boxWidth > 0, boxHeight > 0 {
            canvas.extend = .aspectRatio(width: boxWidth, height: boxHeight)
            canvas.gravity = extendAspectRatioGravity
            canvas.offset = outputMove(extendAspectRatioOffset, for: extendAspectRatioGravity)
        }
        return canvas
    }

    /// Every option that shapes the pixels, in a fixed order with canonical names and values:
    /// the result cache's and the ETag's view of a URL. Left out: `expires` (it decides whether
    /// to answer, not what) and `format`, which is resolved against the source (nil: JPEG, or PNG
    /// for a source with alpha) and keyed separately, so `f:jpg` and no format on an opaque
    /// source are one result; `filename` and `returnsAttachment`, which change a header, not
    /// the bytes.
    public var canonical: String {
        // fill-down and force never enlarge: `:1` on them is the same request as `:0`.
        let enlarges = enlarge && resizingType != .fillDown && resizingType != .force
        var parts = [
            "rt:\(resizingType.rawValue)", "w:\(width)", "h:\(height)", "el:\(enlarges ? 1 : 0)", "g:\(gravity)", "dpr:\(dpr)",
            "q:\(quality.map(String.init) ?? "default")"
        ]
        // The options below only when set: keys of URLs without them stay as they were.
        if minWidth > 0 { parts.append("mw:\(minWidth)") }
        if minHeight > 0 { parts.append("mh:\(minHeight)") }
        if zoom != Zoom(x: 1, y: 1) { parts.append("z:\(zoom.x):\(zoom.y)") }
        if let trim { parts.append("t:\(trim)") }
        if let crop { parts.append("c:\(crop)") }
        if rotation != 0 { parts.append("rot:\(rotation)") }
        if !autoRotates { parts.append("ar:0") }
        if !stripsColorProfile { parts.append("scp:0") }
        if keptMetadata != .copyright { parts.append("md:\(keptMetadata.rawValue)") }
        if let blur { parts.append("bl:\(blur)") }
        if let sharpen { parts.append("sh:\(sharpen)") }
        if let pixelate { parts.append("pix:\(pixelate)") }
        if gravityOffset != .zero { parts.append("g-offset:\(gravityOffset)") }
        if extend { parts.append("ex:1:\(extendGravity)" + (extendOffset == .zero ? "" : ":\(extendOffset)")) }
        if extendAspectRatio && !extend {
            parts.append("exar:1:\(extendAspectRatioGravity)" + (extendAspectRatioOffset == .zero ? "" : ":\(extendAspectRatioOffset)"))
        }
        if padding != .zero { parts.append("pd:\(padding.top):\(padding.right):\(padding.bottom):\(padding.left)") }
        if let background { parts.append("bg:\(background.hex)") }
        if let maxBytes { parts.append("mb:\(maxBytes)") }
        if !formatQuality.isEmpty {
            parts.append(
                "fq:" + formatQuality.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.key.rawValue):\($0.value)" }.joined(separator: ":"))
        }
        if !skipProcessing.isEmpty { parts.append("skp:" + skipProcessing.map(\.rawValue).sorted().joined(separator: ":")) }
        if let cacheBuster { parts.append("cb:\(cacheBuster)") }
        return parts.joined(separator: "/")
    }
}

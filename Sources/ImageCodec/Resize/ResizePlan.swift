/// What one `Resize` does to one image: the output size, and the part of the source (in
/// fractional source pixels) that the output shows. Rounding rules: see `Resize`.
struct ResizePlan: Hashable, Sendable {
    var width: Int
    var height: Int
    var crop: PixelRect

    /// Nothing to do: the source as it is.
    init(width: Int, height: Int) {
        self.init(width: width, height: height, crop: PixelRect(width: width, height: height))
    }

    init(width: Int, height: Int, crop: PixelRect) {
        self.width = width
        self.height = height
        self.crop = crop
    }

    /// The plan for `resize` (nil: full size) on a `sourceWidth × sourceHeight` image, both in
    /// the same orientation. The resize must have passed `Resize.validate`.
    init(_ resize: Resize?, sourceWidth w: Int, sourceHeight h: Int) {
        self.init(box: resize, sourceWidth: w, sourceHeight: h)
        guard let resize, resize.minimumWidth > 0 || resize.minimumHeight > 0 else { return }
        // imgproxy's min-width and min-height: the source is scaled at least that much (past
        // `enlarge`), then cropped to the box where the box has a side.
        let source = (width: Double(w), height: Double(h))
        let scale = max(Double(resize.minimumWidth) / source.width, Double(resize.minimumHeight) / source.height)
        // The box's own scale (its rounded side may be a hair off): a minimum at or below it does nothing.
        guard scale > max(Double(width) / crop.width, Double(height) / crop.height) + 1e-9 else { return }
        func side(_ box: Int, _ scaled: Double) -> Int { box > 0 ? min(box, Self.rounded(scaled)) : Self.rounded(scaled) }
        let (outputWidth, outputHeight) = (side(resize.width, source.width * scale), side(resize.height, source.height * scale))
        self.init(
            width: outputWidth, height: outputHeight,
            crop: Self.placed(
                width: min(source.width, Double(outputWidth) / scale), height: min(source.height, Double(outputHeight) / scale),
                in: source, gravity: resize.gravity, whole: false, offset: resize.offset, outputWidth: outputWidth))
    }

    /// The plan for the box alone, before any minimum size.
    private init(box resize: Resize?, sourceWidth w: Int, sourceHeight h: Int) {
        guard let resize else {
            self.init(width: w, height: h)
            return
        }
        let (box, source) = ((width: resize.width, height: resize.height), (width: Double(w), height: Double(h)))
        switch resize.mode {
        case .force:
            self.init(width: box.width, height: box.height, crop: PixelRect(width: w, height: h))
        case .fit where box.width == 0 && box.height == 0:
            // Only a minimum size asks for anything (see `init(_:sourceWidth:sourceHeight:)`).
            self.init(width: w, height: h)
        case .fit:
            let scaleX = box.width > 0 ? Double(box.width) / source.width : .infinity
            let scaleY = box.height > 0 ? Double(box.height) / source.height : .infinity
            let scale = min(scaleX, scaleY)
            guard resize.enlarge || scale < 1 else {
                self.init(width: w, height: h)
                return
            }
            // The side the box fixes is exactly the box's; the other is rounded.
            if scaleX <= scaleY {
                self.init(width: box.width, height: Self.rounded(source.height * scale), crop: PixelRect(width: w, height: h))
            } else {
                self.init(width: Self.rounded(source.width * scale), height: box.height, crop: PixelRect(width: w, height: h))
            }
        case .fill, .fillDown:
            let scaleX = Double(box.width) / source.width
            let scaleY = Double(box.height) / source.height
            if max(scaleX, scaleY) <= 1 || resize.enlarge {
                // Cover the box: the side that binds keeps the whole source, the other is cut to
                // the box's aspect ratio (computed from integers, so a 4000×3000 → 400×400 crop is
                // exactly 3000 wide).
                let cropWidth = scaleX >= scaleY ? source.width : Double(box.width) * source.height / Double(box.height)
                let cropHeight = scaleX >= scaleY ? Double(box.height) * source.width / Double(box.width) : source.height
                self.init(
                    width: box.width, height: box.height,
                    crop: Self.placed(
                        width: cropWidth, height: cropHeight, in: source, gravity: resize.gravity, whole: false, offset: resize.offset,
                        outputWidth: box.width))
            } else if resize.mode == .fill {
                // Smaller than the box on some side: only what exceeds the box is cut, 1:1.
                let (outputWidth, outputHeight) = (min(w, box.width), min(h, box.height))
                self.init(
                    width: outputWidth, height: outputHeight,
                    crop: Self.placed(
                        width: Double(outputWidth), height: Double(outputHeight), in: source,
                        gravity: resize.gravity, whole: true, offset: resize.offset, outputWidth: outputWidth))
            } else {
                // fill-down on a small source: the largest crop of the box's aspect ratio, 1:1.
                // Products of sides up to 100,000 fit easily in Int.
                let wider = w * box.height >= h * box.width
                let outputWidth = wider ? min(w, max(1, Self.divided(h * box.width, by: box.height))) : w
                let outputHeight = wider ? h : min(h, max(1, Self.divided(w * box.height, by: box.width)))
                self.init(
                    width: outputWidth, height: outputHeight,
                    crop: Self.placed(
                        width: Double(outputWidth), height: Double(outputHeight), in: source,
                        gravity: resize.gravity, whole: true, offset: resize.offset, outputWidth: outputWidth))
            }
        }
    }

    /// True when the output is the crop's pixels as they are: same size, on whole pixels.
    var copiesPixels: Bool {
        crop.width == Double(width) && crop.height == Double(height) && crop.x == crop.x.rounded() && crop.y == crop.y.rounded()
    }

    /// The same plan for the image as stored, when `orientation` turns the stored
    /// `storedWidth × storedHeight` pixels upright: the output size swaps for the orientations
    /// that exchange the sides, and the crop moves to where its pixels are in the file, so a
    /// decode can skip the rest before any rotation.
    func stored(_ orientation: ExifOrientation, storedWidth sw: Int, storedHeight sh: Int) -> ResizePlan {
        let (w, h) = (Double(sw), Double(sh))
        let c = crop
        // Where the upright rectangle's pixels lie in stored coordinates (see Bitmap.applying).
        let mapped: PixelRect =
            switch orientation {
            case .up: c
            case .upMirrored: PixelRect(x: w - c.maxX, y: c.y, width: c.width, height: c.height)
            case .down: PixelRect(x: w - c.maxX, y: h - c.maxY, width: c.width, height: c.height)
            case .downMirrored: PixelRect(x: c.x, y: h - c.maxY, width: c.width, height: c.height)
            case .leftMirrored: PixelRect(x: c.y, y: c.x, width: c.height, height: c.width)
            case .right: PixelRect(x: c.y, y: h - c.maxX, width: c.height, height: c.width)
            case .rightMirrored: PixelRect(x: w - c.maxY, y: h - c.maxX, width: c.height, height: c.width)
            case .left: PixelRect(x: w - c.maxY, y: c.x, width: c.height, height: c.width)
            }
        return orientation.swapsDimensions
            ? ResizePlan(width: height, height: width, crop: mapped)
            : ResizePlan(width: width, height: height, crop: mapped)
    }

    private static func rounded(_ value: Double) -> Int {
        max(1, Int(value.rounded()))
    }

    /// `numerator / denominator` rounded to the nearest integer (halves up).
    private static func divided(_ numerator: Int, by denominator: Int) -> Int {
        (2 * numerator + denominator) / (2 * denominator)
    }

    /// A `width × height` crop placed in `source` by `gravity`; on whole pixels when `whole`.
    private static func placed(
        width: Double, height: Double, in source: (width: Double, height: Double), gravity: Gravity,
        whole: Bool, offset: GravityOffset = .zero, outputWidth: Int? = nil
    ) -> PixelRect {
        // The offset's pixels are the output's: source pixels per output pixel.
        let pixelScale = outputWidth.map { width / Double(max($0, 1)) } ?? 1
        var x = gravity.offset(
            length: width, total: source.width, axis: .horizontal,
            shift: offset.shift(total: source.width, axis: .horizontal, pixelScale: pixelScale))
        var y = gravity.offset(
            length: height, total: source.height, axis: .vertical,
            shift: offset.shift(total: source.height, axis: .vertical, pixelScale: pixelScale))
        if whole { (x, y) = (x.rounded(.down), y.rounded(.down)) }
        return PixelRect(x: x, y: y, width: width, height: height)
    }
}

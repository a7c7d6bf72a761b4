import URLSigning
import ImageCodec

/// imgproxy's processing options: `name:arg:arg` segments with its long and short names.
/// Trailing arguments may be left out and empty ones keep what was set; an unknown option or a
/// malformed argument is an error naming it (answered 400).
enum OptionParser {
    struct Failure: Error, Equatable {
        let message: String
    }

    static func parse(_ segments: [Substring]) throws(Failure) -> ProcessingOptions {
        var options = ProcessingOptions()
        // `c:` without a gravity takes `g:`'s (offsets included), wherever in the path `g:` comes.
        var cropGravity: (Gravity, GravityOffset)?
        for segment in segments {
            let parts = segment.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
            let name = parts[0], arguments = Array(parts.dropFirst())
            func argument(_ index: Int) -> String? { index < arguments.count && !arguments[index].isEmpty ? arguments[index] : nil }
            func limitArguments(_ count: Int) throws(Failure) {
                guard arguments.count <= count else { throw Failure(message: "\(name): at most \(count) arguments, got \(arguments.count)") }
            }
            switch name {
            case "resize", "rs":
                try limitArguments(8)
                if let type = argument(0) { options.resizingType = try resizingType(type, name) }
                try applySize(arguments.dropFirst(), name: name, to: &options)
            case "size", "s":
                try limitArguments(7)
                try applySize(arguments[...], name: name, to: &options)
            case "resizing_type", "rt":
                try limitArguments(1)
                if let type = argument(0) { options.resizingType = try resizingType(type, name) }
            case "width", "w":
                try limitArguments(1)
                if let value = argument(0) { options.width = try side(value, name) }
            case "height", "h":
                try limitArguments(1)
                if let value = argument(0) { options.height = try side(value, name) }
            case "min-width", "mw":
                try limitArguments(1)
                if let value = argument(0) { options.minWidth = try side(value, name) }
            case "min-height", "mh":
                try limitArguments(1)
                if let value = argument(0) { options.minHeight = try side(value, name) }
            case "zoom", "z":
                try limitArguments(2)
                guard let first = argument(0) else { throw Failure(message: "\(name): a zoom is needed") }
                let x = try zoom(first, name)
                options.zoom = .init(x: x, y: try argument(1).map { (text: String) throws(Failure) -> Double in try zoom(text, name) } ?? x)
            case "enlarge", "el":
                try limitArguments(1)
                if let value = argument(0) { options.enlarge = try boolean(value, name) }
            case "gravity", "g":
                try limitArguments(3)
                if argument(0) != nil { (options.gravity, options.gravityOffset) = try gravity(arguments, name) }
            case "crop", "c":
                try limitArguments(5)
                let width = try cropLength(argument(0) ?? "0", name), height = try cropLength(argument(1) ?? "0", name)
                cropGravity = argument(2) != nil ? try gravity(Array(arguments.dropFirst(2)), name) : nil
                options.crop = width == .whole && height == .whole ? nil : CropRegion(width: width, height: height)
            case "dpr":
                try limitArguments(1)
                if let value = argument(0) {
                    guard let dpr = Double(value), dpr.isFinite, dpr > 0, dpr <= 8 else {
                        throw Failure(message: "dpr: must be a number in (0, 8], got \(value.prefix(32))")
                    }
                    options.dpr = dpr
                }
            case "quality", "q":
                try limitArguments(1)
                if let value = argument(0) {
                    guard let quality = Int(value), (0...100).contains(quality) else {
                        throw Failure(message: "\(name): must be 0-100, got \(value.prefix(32))")
                    }
                    options.quality = quality == 0 ? nil : quality
                }
            case "format", "f", "ext":
                try limitArguments(1)
                if let value = argument(0) { options.format = try format(value, name) }
            case "extend", "ex":
                try limitArguments(4)
                if let value = argument(0) { options.extend = try boolean(value, name) }
                if argument(1) != nil {
                    (options.extendGravity, options.extendOffset) = try gravity(Array(arguments.dropFirst()), name, smart: false)
                }
            case "extend_aspect_ratio", "extend_ar", "exar":
                try limitArguments(4)
                if let value = argument(0) { options.extendAspectRatio = try boolean(value, name) }
                if argument(1) != nil {
                    (options.extendAspectRatioGravity, options.extendAspectRatioOffset) = try gravity(
                        Array(arguments.dropFirst()), name, smart: false)
                }
            case "padding", "pd":
                try limitArguments(4)
                options.padding = try padding(arguments, name)
            case "background", "bg":
                try limitArguments(3)
                options.background = try background(arguments, name)
            case "rotate", "rot":
                try limitArguments(1)
                if let value = argument(0) {
                    guard let angle = Int(value), angle % 90 == 0, abs(angle) <= 3600 else {
                        throw Failure(message: "\(name): must be a multiple of 90, got \(value.prefix(32))")
                    }
                    options.rotation = (angle % 360 + 360) % 360
                }
            case "auto_rotate", "ar":
                try limitArguments(1)
                if let value = argument(0) { options.autoRotates = try boolean(value, name) }
            case "blur", "bl":
                try limitArguments(1)
                if let value = argument(0) { options.blur = try sigma(value, name) }
            case "sharpen", "sh":
                try limitArguments(1)
                if let value = argument(0) { options.sharpen = try sigma(value, name) }
            case "pixelate", "pix":
                try limitArguments(1)
                if let value = argument(0) {
                    let size = try side(value, name)
                    options.pixelate = size <= 1 ? nil : size
                }
            case "trim", "t":
                try limitArguments(4)
                options.trim = try trim(arguments, name)
            case "strip_color_profile", "scp":
                try limitArguments(1)
                if let value = argument(0) { options.stripsColorProfile = try boolean(value, name) }
            case "strip_metadata", "sm":
                try limitArguments(1)
                if let value = argument(0) { options.stripsMetadata = try boolean(value, name) }
            case "keep_copyright", "kcr":
                try limitArguments(1)
                if let value = argument(0) { options.keepsCopyright = try boolean(value, name) }
            case "enforce_thumbnail", "eth":
                try limitArguments(1)
                if let value = argument(0) { options.enforcesThumbnail = try boolean(value, name) }
            case "max_bytes", "mb":
                try limitArguments(1)
                if let value = argument(0) {
                    // 0 is imgproxy's "no cap"; 1 GiB is far above any image the service makes.
                    guard let bytes = Int(value), (0...(1 << 30)).contains(bytes) else {
                        throw Failure(message: "\(name): must be a byte count from 0 to \(1 << 30), got \(value.prefix(32))")
                    }
                    options.maxBytes = bytes == 0 ? nil : bytes
                }
            case "format_quality", "fq":
                guard arguments.count % 2 == 0, arguments.count <= 8 else {
                    throw Failure(message: "\(name): expected format:quality pairs, got \(arguments.count) arguments")
                }
                for pair in stride(from: 0, to: arguments.count, by: 2) {
                    let format = try format(arguments[pair], name)
                    guard let quality = Int(arguments[pair + 1]), (0...100).contains(quality) else {
                        throw Failure(message: "\(name): a quality must be 0-100, got \(arguments[pair + 1].prefix(32))")
                    }
                    options.formatQuality[format] = quality == 0 ? nil : quality
                }
            case "filename", "fn":
                try limitArguments(2)
                options.filename = try filename(arguments, name)
            case "return_attachment", "att":
                try limitArguments(1)
                if let value = argument(0) { options.returnsAttachment = try boolean(value, name) }
            case "skip_processing", "skp":
                guard arguments.count <= 16 else { throw Failure(message: "\(name): at most 16 formats, got \(arguments.count)") }
                options.skipProcessing = []
                for format in arguments where !format.isEmpty {
                    switch format.lowercased() {
                    case "jpg", "jpeg": options.skipProcessing.insert(.jpeg)
                    case "png": options.skipProcessing.insert(.png)
                    case "webp": options.skipProcessing.insert(.webp)
                    case "avif": options.skipProcessing.insert(.avif)
                    case "heic", "heif": options.skipProcessing.insert(.heic)
                    case "gif": options.skipProcessing.insert(.gif)
                    // imgproxy's other formats: the service never reads them, so never skips them.
                    case "svg", "ico", "bmp", "tiff", "jxl": break
                    default: throw Failure(message: "\(name): unknown image format \(format.prefix(32))")
                    }
                }
            case "cachebuster", "cb":
                try limitArguments(1)
                options.cacheBuster = argument(0)
            case "expires", "exp":
                try limitArguments(1)
                if let value = argument(0) {
                    guard let time = Int(value) else { throw Failure(message: "\(name): must be a unix time, got \(value.prefix(32))") }
                    options.expires = time
                }
            default:
                throw Failure(message: "unknown option \(name.isEmpty ? "(empty)" : name)")
            }
        }
        let (gravity, offset) = cropGravity ?? (options.gravity, options.gravityOffset)
        options.crop?.gravity = gravity
        options.crop?.offset = ProcessingOptions.directional(offset, for: gravity)
        return options
    }

    static func format(_ value: String, _ name: String) throws(Failure) -> ProcessingOptions.OutputFormat {
        switch value.lowercased() {
        case "jpg", "jpeg": return .jpeg
        case "png": return .png
        case "webp": return .webp
        case "avif": return .avif
        default: throw Failure(message: "\(name): unsupported format \(value) (jpg, jpeg, png, webp or avif)")
        }
    }

    /// `width:height:enlarge[:extend]`, each optional.
    private static func applySize(_ arguments: ArraySlice<String>, name: String, to options: inout ProcessingOptions) throws(Failure) {
        let values = Array(arguments)
        if values.count > 0, !values[0].isEmpty { options.width = try side(values[0], name) }
        if values.count > 1, !values[1].isEmpty { options.height = try side(values[1], name) }
        if values.count > 2, !values[2].isEmpty { options.enlarge = try boolean(values[2], name) }
        if values.count > 3, !values[3].isEmpty { options.extend = try boolean(values[3], name) }
        if values.count > 4, !values[4].isEmpty {
            (options.extendGravity, options.extendOffset) = try gravity(Array(values[4...]), name, smart: false)
        }
    }

    private static func resizingType(_ value: String, _ name: String) throws(Failure) -> ProcessingOptions.ResizingType {
        guard let type = ProcessingOptions.ResizingType(rawValue: value) else {
            throw Failure(message: "\(name): unknown resizing type \(value) (fit, fill, fill-down, force, auto)")
        }
        return type
    }

    /// A box side: a whole number from 0 to ``ProcessingOptions/maxSide``, checked here so no
    /// arithmetic downstream meets a larger one.
    private static func side(_ value: String, _ name: String) throws(Failure) -> Int {
        guard let side = Int(value), (0...ProcessingOptions.maxSide).contains(side) else {
            throw Failure(message: "\(name): a size must be a whole number from 0 to \(ProcessingOptions.maxSide), got \(value.prefix(32))")
        }
        return side
    }

    /// A zoom factor: above 0, at most `ProcessingOptions.maxZoom`.
    private static func zoom(_ value: String, _ name: String) throws(Failure) -> Double {
        guard let zoom = Double(value), zoom.isFinite, zoom > 0, zoom <= ProcessingOptions.maxZoom else {
            throw Failure(message: "\(name): a zoom must be a number above 0 and at most \(Int(ProcessingOptions.maxZoom)), got \(value.prefix(32))")
        }
        return zoom
    }

    /// A crop side as imgproxy reads it: 1 and more pixels, below 1 a fraction of the image's
    /// side, 0 the whole side.
    private static func cropLength(_ value: String, _ name: String) throws(Failure) -> CropRegion.Length {
        guard let number = Double(value), number.isFinite, number >= 0, number <= Double(ProcessingOptions.maxSide) else {
            throw Failure(
                message: "\(name): a crop side must be 0, a fraction below 1 or pixels up to \(ProcessingOptions.maxSide), got \(value.prefix(32))")
        }
        return CropRegion.Length(number)
    }

    private static func boolean(_ value: String, _ name: String) throws(Failure) -> Bool {
        switch value.lowercased() {
        case "1", "t", "true": return true
        case "0", "f", "false": return false
        default: throw Failure(message: "\(name): expected 1 or 0, got \(value)")
        }
    }

    /// CSS order, as imgproxy reads it: `top[:right[:bottom[:left]]]`; the top also stands for
    /// every side left out, the right also for the left. Each a size as `w:` takes, at least
    /// one given.
    private static func padding(_ arguments: [String], _ name: String) throws(Failure) -> Canvas.Insets {
        var sides: [Int?] = []
        for index in 0..<4 {
            let value = index < arguments.count && !arguments[index].isEmpty ? arguments[index] : nil
            sides.append(try value.map { (text: String) throws(Failure) -> Int in try side(text, name) })
        }
        guard sides.contains(where: { $0 != nil }) else { throw Failure(message: "\(name): at least one side is needed") }
        return Canvas.Insets(cssOrder: sides)
    }

    /// A filter's σ: a number from 0 to `Bitmap.maximumFilterSigma`; 0 is no filter (nil).
    private static func sigma(_ value: String, _ name: String) throws(Failure) -> Double? {
        guard let sigma = Double(value), sigma.isFinite, (0...Bitmap.maximumFilterSigma).contains(sigma) else {
            throw Failure(message: "\(name): sigma must be a number from 0 to \(Int(Bitmap.maximumFilterSigma)), got \(value.prefix(32))")
        }
        return sigma == 0 ? nil : sigma
    }

    /// `name[:encoded]`: the name as written, or base64url when `encoded` is true; at most 255
    /// bytes, no control characters. Empty: the source's name.
    private static func filename(_ arguments: [String], _ name: String) throws(Failure) -> String? {
        guard let given = arguments.first, !given.isEmpty else { return nil }
        var text = given
        if arguments.count > 1, !arguments[1].isEmpty, try boolean(arguments[1], name) {
            guard let bytes = Base64URL.decode(given), let decoded = String(bytes: bytes, encoding: .utf8) else {
                throw Failure(message: "\(name): the encoded name is not base64url UTF-8")
            }
            text = decoded
        }
        guard text.utf8.count <= 255, !text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw Failure(message: "\(name): a file name is at most 255 bytes, without control characters")
        }
        return text
    }

    /// `threshold[:RRGGBB[:equal_hor[:equal_ver]]]`: no threshold is no trim, no colour the
    /// top-left pixel's (imgproxy's rules).
    private static func trim(_ arguments: [String], _ name: String) throws(Failure) -> Trim? {
        func given(_ index: Int) -> String? { index < arguments.count && !arguments[index].isEmpty ? arguments[index] : nil }
        guard let text = given(0) else { return nil }
        guard let threshold = Double(text), threshold.isFinite, (0...Trim.maximumThreshold).contains(threshold) else {
            throw Failure(message: "\(name): the threshold must be a number from 0 to \(Int(Trim.maximumThreshold)), got \(text.prefix(32))")
        }
        var trim = Trim(threshold: threshold)
        if let hex = given(1) {
            guard let colour = RGBColor(hex: hex) else { throw Failure(message: "\(name): the colour must be RRGGBB, got \(hex.prefix(32))") }
            trim.color = colour
        }
        if let value = given(2) { trim.equalHorizontal = try boolean(value, name) }
        if let value = given(3) { trim.equalVertical = try boolean(value, name) }
        return trim
    }

    /// `R:G:B` (0-255 each) or `RRGGBB`; no argument: none.
    private static func background(_ arguments: [String], _ name: String) throws(Failure) -> RGBColor? {
        let given = arguments.filter { !$0.isEmpty }
        switch given.count {
        case 0:
            return nil
        case 1:
            guard let colour = RGBColor(hex: given[0]) else {
                throw Failure(message: "\(name): expected RRGGBB or R:G:B, got \(given[0].prefix(32))")
            }
            return colour
        case 3 where arguments.count == 3:
            let channels = given.compactMap { UInt8($0) }
            guard channels.count == 3 else { throw Failure(message: "\(name): R, G and B must be 0-255") }
            return RGBColor(red: channels[0], green: channels[1], blue: channels[2])
        default:
            throw Failure(message: "\(name): expected RRGGBB or R:G:B")
        }
    }

    /// `ce|no|so|ea|we|noea|nowe|soea|sowe[:x:y]`, `fp:x:y`, or `sm` (the attention smart crop,
    /// as imgproxy's), refused where imgproxy refuses it (`smart: false`: extend's gravity).
    /// Offsets as imgproxy writes them: inward from the named edge (rightward and downward for
    /// the centre), pixels from 1 on, a fraction of the side below; `sm` and `fp` take none.
    private static func gravity(_ arguments: [String], _ name: String, smart: Bool = true) throws(Failure) -> (Gravity, GravityOffset) {
        let type = arguments[0]
        if type == "sm" {
            guard smart else { throw Failure(message: "\(name): gravity sm does not apply here") }
            guard arguments.dropFirst().allSatisfy(\.isEmpty) else { throw Failure(message: "\(name): gravity sm takes no offsets") }
            return (.smart, .zero)
        }
        if type == "fp" {
            guard arguments.count == 3, let x = Double(arguments[1]), let y = Double(arguments[2]), let point = Gravity.focusPoint(x: x, y: y) else {
                throw Failure(message: "\(name): fp needs x and y in 0-1")
            }
            return (point, .zero)
        }
        guard arguments.count <= 3 else { throw Failure(message: "\(name): a gravity takes at most two offsets") }
        var offsets: [Double] = []
        for text in arguments.dropFirst() {
            guard !text.isEmpty else {
                offsets.append(0)
                continue
            }
            guard let value = Double(text), value.isFinite, abs(value) <= Double(ProcessingOptions.maxSide) else {
                throw Failure(message: "\(name): a gravity offset must be a number up to \(ProcessingOptions.maxSide) pixels, got \(text.prefix(32))")
            }
            offsets.append(value)
        }
        let offset = GravityOffset(x: offsets.first ?? 0, y: offsets.count > 1 ? offsets[1] : 0)
        let named: [String: Gravity] = [
            "ce": .centre, "no": .north, "so": .south, "ea": .east, "we": .west, "noea": .northEast, "nowe": .northWest,
            "soea": .southEast, "sowe": .southWest
        ]
        guard let gravity = named[type] else { throw Failure(message: "\(name): unknown gravity \(type)") }
        return (gravity, offset)
    }
}

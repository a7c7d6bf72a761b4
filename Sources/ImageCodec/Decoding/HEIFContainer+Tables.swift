/// The `meta` box's tables, read into arrays no longer than ``HEIFContainer/Limits`` allow.
extension HEIFContainer {
    struct Item {
        var type: FourCC
        /// Where its bytes are in the file (an `idat` extent is a file range too).
        var extents: [Range<Int>] = []
        /// 1-based indices into `Tables.properties`.
        var properties: [Int] = []
    }

    struct Reference {
        var type: FourCC
        var from: UInt32
        var to: [UInt32]
    }

    /// Valid only during the walk: `bytes` is the file being checked.
    struct Tables {
        let bytes: UnsafeRawBufferPointer
        var primary: UInt32
        var items: [UInt32: Item]
        var references: [Reference]
        var properties: [Box]
    }
}

extension HEIFContainer.Walk {
    typealias FourCC = HEIFContainer.FourCC
    typealias Limits = HEIFContainer.Limits

    /// Reads `pitm`, `iinf`, `iloc`, `iref`, `iprp` (`ipco`, `ipma`) and `idat`.
    mutating func tables(_ meta: HEIFContainer.Box) throws(ImageCodecError) -> HEIFContainer.Tables {
        let boxes = try children(of: meta.payload.lowerBound + 4..<meta.payload.upperBound, counted: false)
        func one(_ type: FourCC) throws(ImageCodecError) -> HEIFContainer.Box? {
            let found = boxes.filter { $0.type == type }
            guard found.count <= 1 else { throw .corruptData("HEIF: more than one '\(type)' box") }
            return found.first
        }
        guard let pitm = try one(FourCC("pitm")) else { throw .corruptData("HEIF: no primary item ('pitm')") }
        guard let iinf = try one(FourCC("iinf")) else { throw .corruptData("HEIF: no item information ('iinf')") }
        guard let iloc = try one(FourCC("iloc")) else { throw .corruptData("HEIF: no item locations ('iloc')") }
        let idat = try one(FourCC("idat"))?.payload
        var cursor = HEIFContainer.Cursor(bytes, pitm.payload)
        let primary = try cursor.versionAndFlags().version == 0 ? UInt32(try cursor.u16()) : try cursor.u32()
        var items = try itemInformation(iinf)
        try locations(iloc, idat: idat, into: &items)
        let references = try one(FourCC("iref")).map { (box) throws(ImageCodecError) in try self.references(box) } ?? []
        let properties = try one(FourCC("iprp")).map { (box) throws(ImageCodecError) in try self.properties(box, into: &items) } ?? []
        return HEIFContainer.Tables(bytes: bytes, primary: primary, items: items, references: references, properties: properties)
    }

    private mutating func itemInformation(_ iinf: HEIFContainer.Box) throws(ImageCodecError) -> [UInt32: HEIFContainer.Item] {
        var cursor = HEIFContainer.Cursor(bytes, iinf.payload)
        let version = try cursor.versionAndFlags().version
        let count = version == 0 ? try cursor.u16() : Int(try cursor.u32())
        guard count <= Limits.maxItems else { throw .limitExceeded("HEIF: \(count) items, more than \(Limits.maxItems)") }
        let entries = try children(of: cursor.offset..<iinf.payload.upperBound, counted: false)
        guard entries.count <= Limits.maxItems else { throw .limitExceeded("HEIF: \(entries.count) items, more than \(Limits.maxItems)") }
        var items: [UInt32: HEIFContainer.Item] = [:]
        for entry in entries where entry.type == FourCC("infe") {
            var cursor = HEIFContainer.Cursor(bytes, entry.payload)
            let version = try cursor.versionAndFlags().version
            // Versions 0 and 1 carry no item type: nothing libheif decodes.
            guard version >= 2 else { continue }
            let id = version == 2 ? UInt32(try cursor.u16()) : try cursor.u32()
            try cursor.skip(2) // protection index
            let type = FourCC(value: try cursor.u32())
            guard items[id] == nil else { throw .corruptData("HEIF: item \(id) is declared twice") }
            items[id] = HEIFContainer.Item(type: type)
        }
        return items
    }

    /// `iloc`: every extent inside the file (method 0) or inside `idat` (method 1), checked for
    /// overflow. Items may share bytes (a file's thumbnails often do); what the decode's items
    /// add up to is bounded with the whole table (`check(limits:)`).
    private func locations(_ iloc: HEIFContainer.Box, idat: Range<Int>?, into items: inout [UInt32: HEIFContainer.Item]) throws(ImageCodecError) {
        var cursor = HEIFContainer.Cursor(bytes, iloc.payload)
        let version = try cursor.versionAndFlags().version
        guard version <= 2 else { throw .unsupportedFormat(.heifVariant("'iloc' version \(version)")) }
        let sizes = try cursor.u16()
        let (offsetSize, lengthSize, baseSize) = (sizes >> 12, (sizes >> 8) & 15, (sizes >> 4) & 15)
        let indexSize = version == 0 ? 0 : sizes & 15
        for size in [offsetSize, lengthSize, baseSize, indexSize] where ![0, 4, 8].contains(size) {
            throw .corruptData("HEIF: 'iloc' field size \(size)")
        }
        let count = version < 2 ? try cursor.u16() : Int(try cursor.u32())
        guard count <= Limits.maxItems else { throw .limitExceeded("HEIF: \(count) item locations, more than \(Limits.maxItems)") }
        var total = 0
        for _ in 0..<count {
            let id = version < 2 ? UInt32(try cursor.u16()) : try cursor.u32()
            let method = version == 0 ? 0 : try cursor.u16() & 15
            guard try cursor.u16() == 0 else { throw .unsupportedFormat(.heifVariant("item \(id) refers to data in another file")) }
            let base = try cursor.uint(baseSize)
            let extentCount = try cursor.u16()
            guard extentCount <= Limits.maxExtentsPerItem else {
                throw .limitExceeded("HEIF: item \(id) has \(extentCount) extents, more than \(Limits.maxExtentsPerItem)")
            }
            total += extentCount
            guard total <= Limits.maxExtents else { throw .limitExceeded("HEIF: more than \(Limits.maxExtents) extents") }
            let space: Range<Int>
            switch method {
            case 0: space = 0..<bytes.count
            case 1:
                guard let idat else { throw .corruptData("HEIF: item \(id) lies in an 'idat' box the file does not have") }
                space = idat
            default: throw .unsupportedFormat(.heifVariant("item \(id) uses 'iloc' construction method \(method)"))
            }
            var extents: [Range<Int>] = []
            for _ in 0..<extentCount {
                try cursor.skip(indexSize)
                let (offset, overflow) = base.addingReportingOverflow(try cursor.uint(offsetSize))
                let length = try cursor.uint(lengthSize)
                guard !overflow else { throw .corruptData("HEIF: item \(id)'s extent offset overflows") }
                guard offset <= UInt64(space.count) else {
                    throw method == 0 ? .truncatedData : .corruptData("HEIF: item \(id) lies past the end of 'idat'")
                }
                // Length 0: the rest of the file (or of idat).
                let available = UInt64(space.count) - offset
                guard length <= available else {
                    throw method == 0 ? .truncatedData : .corruptData("HEIF: item \(id) lies past the end of 'idat'")
                }
                let start = space.lowerBound + Int(offset)
                extents.append(start..<start + Int(length == 0 ? available : length))
            }
            // An item without an iinf entry (or an old infe) is never decoded.
            items[id, default: HEIFContainer.Item(type: FourCC(value: 0))].extents += extents
        }
    }

    private mutating func references(_ iref: HEIFContainer.Box) throws(ImageCodecError) -> [HEIFContainer.Reference] {
        var cursor = HEIFContainer.Cursor(bytes, iref.payload)
        let idSize = try cursor.versionAndFlags().version == 0 ? 2 : 4
        var result: [HEIFContainer.Reference] = []
        var total = 0
        for box in try children(of: cursor.offset..<iref.payload.upperBound, counted: false) {
            var cursor = HEIFContainer.Cursor(bytes, box.payload)
            let from = UInt32(try cursor.uint(idSize))
            let count = try cursor.u16()
            total += count
            guard total <= Limits.maxReferences else { throw .limitExceeded("HEIF: more than \(Limits.maxReferences) item references") }
            var to: [UInt32] = []
            to.reserveCapacity(count) // small: at most Limits.maxReferences in all
            for _ in 0..<count { to.append(UInt32(try cursor.uint(idSize))) }
            result.append(HEIFContainer.Reference(type: box.type, from: from, to: to))
        }
        return result
    }

    /// `ipco`'s properties (each within its size bound) and `ipma`'s associations.
    private mutating func properties(
        _ iprp: HEIFContainer.Box, into items: inout [UInt32: HEIFContainer.Item]
    ) throws(ImageCodecError)
        -> [HEIFContainer.Box]
    {
        let boxes = try children(of: iprp.payload, counted: false)
        guard let ipco = boxes.first(where: { $0.type == FourCC("ipco") }) else { throw .corruptData("HEIF: no 'ipco' box") }
        let properties = try children(of: ipco.payload, counted: false)
        guard properties.count <= Limits.maxProperties else {
            throw .limitExceeded("HEIF: \(properties.count) properties, more than \(Limits.maxProperties)")
        }
        for property in properties {
            let cap = property.type == FourCC("colr") ? limits.maxICCProfileBytes + 4 : Limits.maxPropertyBytes
            guard property.payload.count <= cap else {
                throw .limitExceeded("HEIF: a '\(property.type)' property of \(property.payload.count) bytes, more than \(cap)")
            }
        }
        var associations = 0
        for ipma in boxes where ipma.type == FourCC("ipma") {
            var cursor = HEIFContainer.Cursor(bytes, ipma.payload)
            let (version, flags) = try cursor.versionAndFlags()
            let entries = Int(try cursor.u32())
            guard entries <= Limits.maxItems else { throw .limitExceeded("HEIF: \(entries) property entries, more than \(Limits.maxItems)") }
            for _ in 0..<entries {
                let id = version < 1 ? UInt32(try cursor.u16()) : try cursor.u32()
                let count = try cursor.u8()
                associations += count
                guard associations <= Limits.maxAssociations else {
                    throw .limitExceeded("HEIF: more than \(Limits.maxAssociations) property associations")
                }
                for _ in 0..<count {
                    let index = flags & 1 == 1 ? try cursor.u16() & 0x7fff : try cursor.u8() & 0x7f
                    guard index <= properties.count else { throw .corruptData("HEIF: item \(id) has property \(index) of \(properties.count)") }
                    if index > 0, items[id] != nil { items[id]?.properties.append(index) }
                }
            }
        }
        return properties
    }
}

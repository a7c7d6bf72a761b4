import Foundation

/// The on-disk form of one entry: a fixed header, the key, the metadata and the bytes.
///
/// ```
/// 0   "IEC1"  magic and format version
/// 4   UInt32  key length          (all integers little-endian)
/// 8   UInt32  metadata length
/// 12  UInt64  data length
/// 20  UInt64  XXH64 of bytes 32..<end, seeded with XXH64 of bytes 0..<20
/// 28  UInt32  reserved (0)
/// 32  key, metadata, data
/// ```
/// Lengths must add up to the file size and the checksum must match, so a torn write,
/// a truncated file or flipped bits read as "corrupt", never as data.
enum EntryFile {
    static let headerSize = 32
    private static let magic: [UInt8] = Array("IEC1".utf8)

    /// The file for an entry, in two parts to write one after the other: the header, key and
    /// metadata (a few hundred bytes), then `data` itself, never copied (a 60 MiB source is
    /// written from the buffer it arrived in).
    static func encode(key: String, metadata: DiskCacheMetadata, data: Data) -> [Data] {
        let keyBytes = Data(key.utf8)
        let metadataBytes = MetadataCoding.encode(metadata)
        var head = Data(magic)
        append(UInt32(keyBytes.count), to: &head)
        append(UInt32(metadataBytes.count), to: &head)
        append(UInt64(data.count), to: &head)
        head.append(Data(count: headerSize - head.count))
        head.append(keyBytes)
        head.append(metadataBytes)
        let checksum = checksum(head: head, data: data)
        head.withUnsafeMutableBytes { $0.storeBytes(of: checksum.littleEndian, toByteOffset: 20, as: UInt64.self) }
        return [head, data]
    }

    /// Bytes of the file `encode` makes for a key of `keyBytes` UTF-8 bytes, `metadata` and
    /// `dataBytes` of data.
    static func size(keyBytes: Int, metadata: DiskCacheMetadata, dataBytes: Int) -> Int {
        headerSize + keyBytes + MetadataCoding.encode(metadata).count + dataBytes
    }

    /// The entry, or nil when the file is not a complete, intact entry. Its bytes are the
    /// file's own buffer, moved to its start and cut to them (so `file` is changed): no second
    /// buffer is made as long as the caller holds the file only there.
    static func decode(_ file: inout Data) -> DiskCacheEntry? {
        guard file.count >= headerSize, file.prefix(4).elementsEqual(magic) else { return nil }
        let (keyLength, metadataLength, dataLength, stored) = file.withUnsafeBytes { bytes in
            (
                Int(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: 4, as: UInt32.self))),
                Int(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: 8, as: UInt32.self))),
                UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: 12, as: UInt64.self)),
                UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: 20, as: UInt64.self))
            )
        }
        // Lengths come from disk: add them with overflow checks (a hostile header must not trap).
        guard let expectedSize = size(keyLength: keyLength, metadataLength: metadataLength, dataLength: dataLength),
            expectedSize == file.count
        else { return nil }
        let start = file.startIndex + headerSize
        let keyRange = start..<start + keyLength
        let metadataRange = keyRange.upperBound..<keyRange.upperBound + metadataLength
        let payload = metadataRange.upperBound..<file.endIndex
        guard checksum(head: file[..<payload.lowerBound], data: file[payload]) == stored,
            let key = String(data: file[keyRange], encoding: .utf8),
            let metadata = MetadataCoding.decode(file[metadataRange])
        else { return nil }
        // The bytes moved to the buffer's start and the rest cut off (Data keeps the buffer: no
        // copy), so callers get a Data whose indices start at 0.
        let count = payload.count
        let offset = payload.lowerBound - file.startIndex
        file.withUnsafeMutableBytes { bytes in
            guard let base = bytes.baseAddress, count > 0 else { return }
            memmove(base, base + offset, count)
        }
        file.count = count
        return DiskCacheEntry(key: key, data: file, metadata: metadata)
    }

    /// True when `prefix` (the first `headerSize` bytes or more) is the header of an entry file
    /// of `fileSize` bytes: right magic and lengths that add up. Used to rebuild an index from
    /// the files when the journal is damaged, without reading every byte.
    static func headerMatches(_ prefix: Data, fileSize: Int) -> Bool {
        guard prefix.count >= headerSize, prefix.prefix(4).elementsEqual(magic) else { return false }
        let (keyLength, metadataLength, dataLength) = prefix.withUnsafeBytes { bytes in
            (
                Int(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: 4, as: UInt32.self))),
                Int(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: 8, as: UInt32.self))),
                UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: 12, as: UInt64.self))
            )
        }
        return size(keyLength: keyLength, metadataLength: metadataLength, dataLength: dataLength) == fileSize
    }

    /// Header + key + metadata + data, or nil when the sum does not fit in an `Int`.
    private static func size(keyLength: Int, metadataLength: Int, dataLength: UInt64) -> Int? {
        guard dataLength <= UInt64(Int.max) else { return nil }
        let (withKey, overflow1) = headerSize.addingReportingOverflow(keyLength)
        let (withMetadata, overflow2) = withKey.addingReportingOverflow(metadataLength)
        let (total, overflow3) = withMetadata.addingReportingOverflow(Int(dataLength))
        return overflow1 || overflow2 || overflow3 ? nil : total
    }

    /// XXH64 of the file from byte 32 on (key, metadata, data), seeded with XXH64 of its first
    /// 20 bytes; `head` is the file up to its data.
    private static func checksum(head: Data, data: Data) -> UInt64 {
        head.withUnsafeBytes { head in
            var state = XXHash64.Streaming(seed: XXHash64.hash(UnsafeRawBufferPointer(rebasing: head[0..<20])))
            state.update(UnsafeRawBufferPointer(rebasing: head[headerSize...]))
            data.withUnsafeBytes { state.update($0) }
            return state.finalize()
        }
    }

    private static func append<T: FixedWidthInteger>(_ value: T, to data: inout Data) {
        withUnsafeBytes(of: value.littleEndian) { data.append(contentsOf: $0) }
    }
}

/// Compact binary metadata: three length-prefixed optional strings, an optional date, then
/// (only when there are any) a count and that many length-prefixed name/value pairs, sorted by
/// name. Cheaper than JSON on the read path, where every microsecond of a hit counts; entries
/// written before the pairs existed end after the date and read back with none.
enum MetadataCoding {
    private static let absent = UInt32.max

    static func encode(_ metadata: DiskCacheMetadata) -> Data {
        var data = Data()
        for field in [metadata.contentType, metadata.etag, metadata.lastModified] {
            if let field {
                let bytes = Data(field.utf8)
                withUnsafeBytes(of: UInt32(bytes.count).littleEndian) { data.append(contentsOf: $0) }
                data.append(bytes)
            } else {
                withUnsafeBytes(of: absent.littleEndian) { data.append(contentsOf: $0) }
            }
        }
        let expires = metadata.expires?.timeIntervalSince1970 ?? .nan
        withUnsafeBytes(of: expires.bitPattern.littleEndian) { data.append(contentsOf: $0) }
        guard !metadata.fields.isEmpty else { return data }
        withUnsafeBytes(of: UInt32(metadata.fields.count).littleEndian) { data.append(contentsOf: $0) }
        for (name, value) in metadata.fields.sorted(by: { $0.key < $1.key }) {
            for text in [name, value] {
                let bytes = Data(text.utf8)
                withUnsafeBytes(of: UInt32(bytes.count).littleEndian) { data.append(contentsOf: $0) }
                data.append(bytes)
            }
        }
        return data
    }

    static func decode(_ data: Data) -> DiskCacheMetadata? {
        let bytes = [UInt8](data)
        var offset = 0
        func u32() -> UInt32? {
            guard offset + 4 <= bytes.count else { return nil }
            defer { offset += 4 }
            return bytes[offset..<offset + 4].reversed().reduce(0) { $0 << 8 | UInt32($1) }
        }
        func string() -> String?? {
            guard let length = u32() else { return .none }
            if length == absent { return .some(nil) }
            guard Int(length) <= bytes.count - offset else { return .none }
            defer { offset += Int(length) }
            return .some(String(decoding: bytes[offset..<offset + Int(length)], as: UTF8.self))
        }
        var strings: [String?] = []
        for _ in 0..<3 {
            guard let value = string() else { return nil }
            strings.append(value)
        }
        guard offset + 8 <= bytes.count else { return nil }
        let bits = bytes[offset..<offset + 8].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        offset += 8
        let seconds = Double(bitPattern: bits)
        var fields: [String: String] = [:]
        if offset < bytes.count {
            // Each pair takes at least 8 bytes: a count beyond that is damage, not a reason to loop.
            guard let count = u32(), Int(count) <= (bytes.count - offset) / 8 else { return nil }
            for _ in 0..<count {
                guard let name = string(), let name, let value = string(), let value else { return nil }
                fields[name] = value
            }
        }
        guard offset == bytes.count else { return nil }
        return DiskCacheMetadata(
            contentType: strings[0], etag: strings[1], lastModified: strings[2],
            expires: seconds.isNaN ? nil : Date(timeIntervalSince1970: seconds), fields: fields)
    }
}

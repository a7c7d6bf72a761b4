import Synchronization

/// Transforms by profile bytes and layout, shared by every decode in the process: a batch of
/// photos from one phone carries the same profile, and builds its transform once.
final class ColorTransformCache: Sendable {
    static let shared = ColorTransformCache(capacity: 32)

    /// A cached verdict for a profile: convert with this transform, leave as is, or ignore.
    enum Entry: Sendable {
        case transform(ColorTransform)
        case sRGB
        case rejected(String)
    }

    private struct Key: Hashable {
        let profile: [UInt8]
        let layout: ColorLayout

        // Hashing the bytes in one call: a CMYK profile can be hundreds of kilobytes.
        func hash(into hasher: inout Hasher) {
            profile.withUnsafeBytes { hasher.combine(bytes: $0) }
            hasher.combine(layout)
        }
    }

    private struct State {
        var entries: [Key: Entry] = [:]
        /// Insertion order, oldest first, for eviction beyond `capacity`.
        var order: [Key] = []
        var statistics = ColorManagementStatistics()
    }

    private let capacity: Int
    private let state = Mutex(State())

    init(capacity: Int) {
        self.capacity = capacity
    }

    var statistics: ColorManagementStatistics { state.withLock { $0.statistics } }

    /// The verdict for `profile` on rows in `layout`, built on first use. Built outside the
    /// lock (it takes milliseconds); two threads racing on a new profile both build, one keeps.
    func entry(for profile: [UInt8], layout: ColorLayout) -> Entry {
        let key = Key(profile: profile, layout: layout)
        if let cached = state.withLock({ state -> Entry? in
            guard let entry = state.entries[key] else { return nil }
            state.statistics.cacheHits += 1
            Self.count(entry, in: &state.statistics)
            return entry
        }) {
            return cached
        }
        let entry: Entry = switch ColorTransform.toSRGB(profile: profile, layout: layout) {
        case .transform(let transform): .transform(transform)
        case .sRGB: .sRGB
        case .rejected(let reason): .rejected(reason)
        }
        return state.withLock { state in
            if case .transform = entry { state.statistics.transformsBuilt += 1 }
            Self.count(entry, in: &state.statistics)
            if let existing = state.entries[key] { return existing }
            state.entries[key] = entry
            state.order.append(key)
            if state.order.count > capacity { state.entries[state.order.removeFirst()] = nil }
            return entry
        }
    }

    /// Records that a decode ignored a profile that does not fit its image.
    func countIgnored() {
        state.withLock { $0.statistics.ignoredProfiles += 1 }
    }

    private static func count(_ entry: Entry, in statistics: inout ColorManagementStatistics) {
        switch entry {
        case .transform: break
        case .sRGB: statistics.sRGBProfiles += 1
        case .rejected: statistics.ignoredProfiles += 1
        }
    }
}

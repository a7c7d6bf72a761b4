import Foundation

/// The Public Suffix List (publicsuffix.org): which names anyone may register under (`com`,
/// `co.uk`, `github.io`, `*.ck`), so that a host's *registrable domain* — its public suffix and
/// one label more — names who controls it. The service's shares are per registrable domain:
/// DNS lookups per zone, one origin's share of the memory budget. A rule of thumb ("the last
/// two labels, three under a two-letter country code") gave `N.xy.cc` a zone per `N`: sixteen
/// names of one cheap domain took all sixteen lookup threads.
///
/// Read from the system's copy of the list (Debian's and Ubuntu's `publicsuffix` package), with
/// the list's own algorithm: the longest matching rule, wildcards (`*.ck`) matching one label,
/// exception rules (`!www.ck`) taking precedence, and the implicit rule `*` (an unlisted top
/// level is a public suffix). Without a list, every top-level domain is a public suffix alone.
struct PublicSuffixList: Sendable {
    private let rules: Set<String>
    private let wildcards: Set<String>
    private let exceptions: Set<String>

    /// Where Debian and Ubuntu install the list (package `publicsuffix`).
    static let systemPath = "/usr/share/publicsuffix/public_suffix_list.dat"

    /// The system's list, read once; an empty list (the implicit rule alone) when it is absent.
    static let system: PublicSuffixList = PublicSuffixList(contentsOf: URL(fileURLWithPath: systemPath)) ?? PublicSuffixList(text: "")

    /// The list in `url`, or nil when it cannot be read.
    init?(contentsOf url: URL) {
        guard let data = try? Data(contentsOf: url) else { return nil }
        self.init(text: String(decoding: data, as: UTF8.self))
    }

    /// The list in `text`: one rule a line, `//` comments, blank lines ignored; each rule's
    /// first white-space-separated word (the format's), lowercased.
    init(text: String) {
        var (rules, wildcards, exceptions) = (Set<String>(), Set<String>(), Set<String>())
        for line in text.split(whereSeparator: \.isNewline) {
            guard let word = line.split(whereSeparator: \.isWhitespace).first, !word.hasPrefix("//") else { continue }
            let rule = word.lowercased()
            if rule.hasPrefix("!") {
                exceptions.insert(String(rule.dropFirst()))
            } else if rule.hasPrefix("*.") {
                wildcards.insert(String(rule.dropFirst(2)))
            } else {
                rules.insert(rule)
            }
        }
        (self.rules, self.wildcards, self.exceptions) = (rules, wildcards, exceptions)
    }

    /// Rules the list holds (tests).
    var count: Int { rules.count + wildcards.count + exceptions.count }

    /// The public suffix of `host` (lowercase, no trailing dot): `co.uk` for `a.b.co.uk`.
    func publicSuffix(of host: String) -> String {
        let labels = host.split(separator: ".", omittingEmptySubsequences: false)
        guard !labels.isEmpty else { return host }
        // Candidates from the longest (the whole name) to the shortest (the top level): the
        // first one a rule matches is the longest match.
        for start in 0..<labels.count {
            let candidate = labels[start...].joined(separator: ".")
            if exceptions.contains(candidate) {
                // An exception's suffix is the exception minus its first label.
                return labels[(start + 1)...].joined(separator: ".")
            }
            if rules.contains(candidate) { return candidate }
            if start + 1 < labels.count, wildcards.contains(labels[(start + 1)...].joined(separator: ".")) { return candidate }
        }
        return String(labels[labels.count - 1])
    }

    /// `host`'s registrable domain, lowercased: its public suffix and the label before it (the
    /// host itself when it is a public suffix, has no label before it, or is an IP address).
    /// What the service's per-origin shares are keyed on: case variants and subdomains of one
    /// domain are one origin.
    func registrableDomain(of host: String) -> String {
        let host = host.lowercased()
        if IPAddress(host) != nil || host.hasPrefix("[") { return host }
        let suffix = publicSuffix(of: host)
        guard host.count > suffix.count, host.hasSuffix("." + suffix) else { return host }
        let rest = host.dropLast(suffix.count + 1)
        let label = rest.split(separator: ".").last.map(String.init) ?? String(rest)
        return label + "." + suffix
    }
}

/// The words `mock.fake` draws from, written here. Name lists follow the common names of each
/// country's public birth and census statistics (no frequencies kept: every entry is as likely).
/// Japanese entries carry their romanisation after `|` for e-mail addresses and user names.
enum FakeData {
    final class Locale: Sendable {
        init(firstNames: [String], lastNames: [String], cities: [String], streets: [String], phone: [String], postcode: String,
             companySuffixes: [String]) {
            self.firstNames = firstNames
            self.lastNames = lastNames
            self.cities = cities
            self.streets = streets
            self.phone = phone
            self.postcode = postcode
            self.companySuffixes = companySuffixes
        }
        let firstNames: [String]
        let lastNames: [String]
        let cities: [String]
        let streets: [String]
        /// `#` any digit, `!` 2…9, `@` 1…9.
        let phone: [String]
        let postcode: String
        /// `%` stands for a family name; else the suffix follows it.
        let companySuffixes: [String]
    }

    /// In ``FakeLocale`` order: en, de, fr, es, ja.
    static let locales: [Locale] = [
        Locale(
            firstNames: ["James", "Mary", "John", "Patricia", "Robert", "Jennifer", "Michael", "Linda", "William", "Elizabeth",
                         "David", "Barbara", "Richard", "Susan", "Joseph", "Jessica", "Thomas", "Sarah", "Charles", "Karen",
                         "Christopher", "Lisa", "Daniel", "Nancy", "Matthew", "Emily", "Anthony", "Sandra", "Mark", "Ashley",
                         "Olivia", "Noah", "Liam", "Emma", "Ava", "Ethan", "Sophia", "Mason", "Harper", "Lucas"],
            lastNames: ["Smith", "Johnson", "Williams", "Brown", "Jones", "Garcia", "Miller", "Davis", "Rodriguez", "Martinez",
                        "Hernandez", "Lopez", "Gonzalez", "Wilson", "Anderson", "Thomas", "Taylor", "Moore", "Jackson", "Martin",
                        "Lee", "Perez", "Thompson", "White", "Harris", "Sanchez", "Clark", "Ramirez", "Lewis", "Robinson",
                        "Walker", "Young", "Allen", "King", "Wright", "Scott"],
            cities: ["New York", "Los Angeles", "Chicago", "Houston", "Phoenix", "Philadelphia", "San Antonio", "San Diego", "Dallas",
                     "Austin", "Jacksonville", "Columbus", "Charlotte", "Indianapolis", "Seattle", "Denver", "Boston", "Nashville",
                     "Portland", "Detroit", "Memphis", "Baltimore", "Milwaukee", "Albuquerque", "Tucson", "Sacramento", "Atlanta",
                     "Omaha", "Raleigh", "Minneapolis"],
            streets: ["Main", "Oak", "Pine", "Maple", "Cedar", "Elm", "Washington", "Lake", "Hill", "Park", "Walnut", "Sunset",
                      "Lincoln", "Jackson", "Church", "River", "Highland", "Franklin", "Spring", "Ridge"],
            phone: ["(!##) !##-####", "+1 !##-!##-####"],
            postcode: "#####",
            companySuffixes: ["Inc.", "LLC", "Group", "Labs", "& Co.", "Partners"]),
        Locale(
            firstNames: ["Maximilian", "Sophie", "Alexander", "Marie", "Paul", "Emilia", "Leon", "Hannah", "Lukas", "Anna",
                         "Felix", "Mia", "Jonas", "Emma", "Elias", "Lena", "Finn", "Lea", "Noah", "Clara", "Ben", "Laura",
                         "Luis", "Johanna", "Jakob", "Katharina", "Tim", "Julia", "Moritz", "Sarah"],
            lastNames: ["Müller", "Schmidt", "Schneider", "Fischer", "Weber", "Meyer", "Wagner", "Becker", "Schulz", "Hoffmann",
                        "Schäfer", "Koch", "Bauer", "Richter", "Klein", "Wolf", "Schröder", "Neumann", "Schwarz", "Zimmermann",
                        "Braun", "Krüger", "Hofmann", "Hartmann", "Lange", "Schmitt", "Werner", "Krause", "Meier", "Lehmann"],
            cities: ["Berlin", "Hamburg", "München", "Köln", "Frankfurt am Main", "Stuttgart", "Düsseldorf", "Leipzig", "Dortmund",
                     "Essen", "Bremen", "Dresden", "Hannover", "Nürnberg", "Duisburg", "Bochum", "Wuppertal", "Bielefeld", "Bonn",
                     "Münster", "Karlsruhe", "Mannheim", "Augsburg", "Wiesbaden", "Freiburg im Breisgau", "Kiel", "Rostock",
                     "Potsdam", "Erfurt", "Mainz"],
            streets: ["Hauptstraße", "Schulstraße", "Gartenstraße", "Bahnhofstraße", "Dorfstraße", "Bergstraße", "Birkenweg",
                      "Lindenstraße", "Kirchstraße", "Waldstraße", "Ringstraße", "Schillerstraße", "Goethestraße", "Mühlenweg",
                      "Wiesenweg", "Am Markt", "Feldstraße", "Rosenstraße"],
            phone: ["+49 @# #######", "+49 15# ########", "0@## ######"],
            postcode: "#####",
            companySuffixes: ["GmbH", "AG", "KG", "GmbH & Co. KG", "& Söhne"]),
        Locale(
            firstNames: ["Gabriel", "Louise", "Léo", "Jade", "Raphaël", "Ambre", "Arthur", "Alice", "Louis", "Rose", "Jules",
                         "Anna", "Adam", "Emma", "Maël", "Lina", "Lucas", "Chloé", "Hugo", "Léa", "Noah", "Manon", "Paul",
                         "Camille", "Nathan", "Inès", "Tom", "Sarah", "Théo", "Juliette"],
            lastNames: ["Martin", "Bernard", "Thomas", "Petit", "Robert", "Richard", "Durand", "Dubois", "Moreau", "Laurent",
                        "Simon", "Michel", "Lefebvre", "Leroy", "Roux", "David", "Bertrand", "Morel", "Fournier", "Girard",
                        "Bonnet", "Dupont", "Lambert", "Fontaine", "Rousseau", "Vincent", "Muller", "Lefèvre", "Faure", "André"],
            cities: ["Paris", "Marseille", "Lyon", "Toulouse", "Nice", "Nantes", "Montpellier", "Strasbourg", "Bordeaux", "Lille",
                     "Rennes", "Reims", "Toulon", "Saint-Étienne", "Le Havre", "Grenoble", "Dijon", "Angers", "Nîmes",
                     "Villeurbanne", "Clermont-Ferrand", "Le Mans", "Aix-en-Provence", "Brest", "Tours", "Amiens", "Limoges",
                     "Annecy", "Perpignan", "Metz"],
            streets: ["rue de la Paix", "rue Victor Hugo", "avenue Jean Jaurès", "rue de la République", "boulevard Pasteur",
                      "rue du Moulin", "place de l'Église", "rue des Écoles", "avenue de la Gare", "rue Nationale",
                      "rue du Château", "allée des Tilleuls", "rue Voltaire", "rue Gambetta", "chemin des Vignes"],
            phone: ["+33 @ ## ## ## ##", "0@ ## ## ## ##"],
            postcode: "#####",
            companySuffixes: ["SA", "SARL", "SAS", "et Fils", "% & Associés"]),
        Locale(
            firstNames: ["Hugo", "Lucía", "Martín", "Sofía", "Lucas", "Martina", "Mateo", "María", "Leo", "Julia", "Daniel",
                         "Paula", "Alejandro", "Valeria", "Pablo", "Emma", "Manuel", "Daniela", "Álvaro", "Carla", "Adrián",
                         "Alba", "Mario", "Noa", "Diego", "Sara", "Javier", "Carmen", "David", "Laura"],
            lastNames: ["García", "Rodríguez", "González", "Fernández", "López", "Martínez", "Sánchez", "Pérez", "Gómez",
                        "Martín", "Jiménez", "Ruiz", "Hernández", "Díaz", "Moreno", "Muñoz", "Álvarez", "Romero", "Alonso",
                        "Gutiérrez", "Navarro", "Torres", "Domínguez", "Vázquez", "Ramos", "Gil", "Ramírez", "Serrano",
                        "Blanco", "Molina"],
            cities: ["Madrid", "Barcelona", "Valencia", "Sevilla", "Zaragoza", "Málaga", "Murcia", "Palma",
                     "Las Palmas de Gran Canaria", "Bilbao", "Alicante", "Córdoba", "Valladolid", "Vigo", "Gijón", "Granada",
                     "A Coruña", "Vitoria-Gasteiz", "Elche", "Oviedo", "Santa Cruz de Tenerife", "Pamplona", "Almería",
                     "San Sebastián", "Santander", "Burgos", "Salamanca", "Cádiz", "Toledo", "León"],
            streets: ["Calle Mayor", "Calle Real", "Avenida de la Constitución", "Calle de Alcalá", "Gran Vía", "Calle del Sol",
                      "Plaza de España", "Calle Nueva", "Paseo de la Castellana", "Calle de la Iglesia", "Avenida de Andalucía",
                      "Calle San Juan", "Calle del Carmen", "Ronda de Toledo", "Calle de Cervantes"],
            phone: ["+34 6## ### ###", "+34 9## ## ## ##", "6## ## ## ##"],
            postcode: "#####",
            companySuffixes: ["S.A.", "S.L.", "y Asociados", "Hermanos %"]),
        Locale(
            firstNames: ["翔|sho", "蓮|ren", "陽翔|haruto", "湊|minato", "大翔|hiroto", "悠真|yuma", "結衣|yui", "陽菜|hina", "葵|aoi",
                         "凛|rin", "芽依|mei", "さくら|sakura", "美咲|misaki", "健太|kenta", "拓海|takumi", "花子|hanako", "太郎|taro",
                         "愛|ai", "優奈|yuna", "翼|tsubasa", "大輝|daiki", "彩|aya", "直樹|naoki", "真央|mao", "康介|kosuke"],
            lastNames: ["佐藤|sato", "鈴木|suzuki", "高橋|takahashi", "田中|tanaka", "伊藤|ito", "渡辺|watanabe", "山本|yamamoto",
                        "中村|nakamura", "小林|kobayashi", "加藤|kato", "吉田|yoshida", "山田|yamada", "佐々木|sasaki",
                        "山口|yamaguchi", "松本|matsumoto", "井上|inoue", "木村|kimura", "林|hayashi", "斎藤|saito", "清水|shimizu",
                        "山崎|yamazaki", "森|mori", "池田|ikeda", "橋本|hashimoto", "阿部|abe"],
            cities: ["東京", "横浜", "大阪", "名古屋", "札幌", "福岡", "神戸", "川崎", "京都", "さいたま", "広島", "仙台", "千葉",
                     "北九州", "堺", "浜松", "新潟", "熊本", "相模原", "岡山", "静岡", "船橋", "鹿児島", "八王子", "姫路", "金沢",
                     "長崎", "那覇", "松山", "宇都宮"],
            streets: ["中央", "本町", "栄町", "緑町", "旭町", "桜木町", "港町", "幸町", "東町", "西町", "南町", "北町", "新町", "元町", "錦町"],
            phone: ["090-####-####", "080-####-####", "070-####-####", "03-####-####", "06-####-####"],
            postcode: "###-####",
            companySuffixes: ["株式会社%", "%株式会社", "%商事", "%工業", "%産業"]),
    ]

    /// ISO 3166 code, then the name in en, de, fr, es, ja.
    static let countries: [(code: String, names: [String])] = [
        ("US", ["United States", "Vereinigte Staaten", "États-Unis", "Estados Unidos", "アメリカ合衆国"]),
        ("DE", ["Germany", "Deutschland", "Allemagne", "Alemania", "ドイツ"]),
        ("FR", ["France", "Frankreich", "France", "Francia", "フランス"]),
        ("ES", ["Spain", "Spanien", "Espagne", "España", "スペイン"]),
        ("JP", ["Japan", "Japan", "Japon", "Japón", "日本"]),
        ("GB", ["United Kingdom", "Vereinigtes Königreich", "Royaume-Uni", "Reino Unido", "イギリス"]),
        ("IT", ["Italy", "Italien", "Italie", "Italia", "イタリア"]),
        ("CA", ["Canada", "Kanada", "Canada", "Canadá", "カナダ"]),
        ("AU", ["Australia", "Australien", "Australie", "Australia", "オーストラリア"]),
        ("BR", ["Brazil", "Brasilien", "Brésil", "Brasil", "ブラジル"]),
        ("MX", ["Mexico", "Mexiko", "Mexique", "México", "メキシコ"]),
        ("NL", ["Netherlands", "Niederlande", "Pays-Bas", "Países Bajos", "オランダ"]),
        ("SE", ["Sweden", "Schweden", "Suède", "Suecia", "スウェーデン"]),
        ("CH", ["Switzerland", "Schweiz", "Suisse", "Suiza", "スイス"]),
        ("AT", ["Austria", "Österreich", "Autriche", "Austria", "オーストリア"]),
        ("BE", ["Belgium", "Belgien", "Belgique", "Bélgica", "ベルギー"]),
        ("PT", ["Portugal", "Portugal", "Portugal", "Portugal", "ポルトガル"]),
        ("IE", ["Ireland", "Irland", "Irlande", "Irlanda", "アイルランド"]),
        ("NO", ["Norway", "Norwegen", "Norvège", "Noruega", "ノルウェー"]),
        ("DK", ["Denmark", "Dänemark", "Danemark", "Dinamarca", "デンマーク"]),
        ("PL", ["Poland", "Polen", "Pologne", "Polonia", "ポーランド"]),
        ("IN", ["India", "Indien", "Inde", "India", "インド"]),
        ("KR", ["South Korea", "Südkorea", "Corée du Sud", "Corea del Sur", "韓国"]),
        ("NZ", ["New Zealand", "Neuseeland", "Nouvelle-Zélande", "Nueva Zelanda", "ニュージーランド"]),
        ("AR", ["Argentina", "Argentinien", "Argentine", "Argentina", "アルゼンチン"]),
    ]

    static let englishStreetSuffixes = ["Street", "Avenue", "Road", "Boulevard", "Lane", "Drive", "Court", "Way"]

    /// Domains reserved for examples (RFC 2606): fake addresses never reach a real mailbox.
    static let mailDomains = ["example.com", "example.org", "example.net"]

    static let jobTitles = [
        "Software Engineer", "Product Manager", "Data Analyst", "Sales Representative", "Marketing Coordinator",
        "Account Manager", "Customer Success Manager", "UX Designer", "Operations Manager", "Financial Analyst",
        "HR Specialist", "QA Engineer", "DevOps Engineer", "Project Manager", "Office Administrator", "Support Engineer",
        "Content Strategist", "Business Analyst", "Chief Technology Officer", "Research Scientist",
    ]

    static let lorem = [
        "lorem", "ipsum", "dolor", "sit", "amet", "consectetur", "adipiscing", "elit", "sed", "do", "eiusmod", "tempor",
        "incididunt", "ut", "labore", "et", "dolore", "magna", "aliqua", "enim", "ad", "minim", "veniam", "quis", "nostrud",
        "exercitation", "ullamco", "laboris", "nisi", "aliquip", "ex", "ea", "commodo", "consequat", "duis", "aute", "irure",
        "in", "reprehenderit", "voluptate", "velit", "esse", "cillum", "fugiat", "nulla", "pariatur", "excepteur", "sint",
        "occaecat", "cupidatat", "non", "proident", "sunt", "culpa", "qui", "officia", "deserunt", "mollit", "anim", "id", "est",
    ]

    static let userAgents = [
        "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
        "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15",
        "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1",
        "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0",
        "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36",
        "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0",
        "MyApp/4.2.1 (iPhone; iOS 18.1; Scale/3.00)",
        "okhttp/4.12.0",
    ]

    /// Lower-case ASCII for an address: umlauts spelled out, accents dropped, the rest left out.
    static func asciiFolded(_ text: String) -> String {
        // Most names are ASCII letters: lower-cased byte by byte.
        if text.utf8.allSatisfy({ $0 < 0x80 }) {
            return String(decoding: text.utf8.compactMap { b -> UInt8? in
                switch b {
                case 65...90: return b + 32
                case 97...122, 48...57: return b
                default: return nil
                }
            }, as: UTF8.self)
        }
        var out = ""
        for scalar in text.lowercased().unicodeScalars {
            switch scalar {
            case "a"..."z", "0"..."9": out.unicodeScalars.append(scalar)
            case "ä": out += "ae"
            case "ö": out += "oe"
            case "ü": out += "ue"
            case "ß": out += "ss"
            case "à", "á", "â", "ã", "å": out += "a"
            case "è", "é", "ê", "ë": out += "e"
            case "ì", "í", "î", "ï": out += "i"
            case "ò", "ó", "ô", "õ": out += "o"
            case "ù", "ú", "û": out += "u"
            case "ç": out += "c"
            case "ñ": out += "n"
            default: break
            }
        }
        return out
    }
}

/**
 * Hand-written story seeds for the story evaluation set (bench/story-pairs.ts turns them into
 * bench/story-pairs.json). Seeds come in topic pairs: the two stories of a pair share the topic,
 * usually an entity and often a number, but report different events, so each is the other's
 * hard negative. `rewrite` is another outlet's own headline for the same event (the wire lead
 * kept), where one exists. Written for this set; no real article is quoted.
 */

/** One story as its first outlet published it. */
export interface StorySeed {
  readonly title: string;
  readonly summary: string;
  /** Another outlet's rewritten headline of the same story. */
  readonly rewrite?: string;
}

export type Language = 'ko' | 'en' | 'ja';

/** Per language: topic pairs of seeds. */
export const SEEDS: Record<Language, readonly (readonly [StorySeed, StorySeed])[]> = {
  ko: [
    [
      {
        title: '삼성전자, 3분기 영업이익 9조1천억원…전년 대비 277% 증가',
        summary:
          '삼성전자가 3분기 연결 기준 영업이익이 9조1천억원으로 잠정 집계됐다고 8일 공시했다. 메모리 반도체 가격 반등과 고대역폭메모리(HBM) 판매 확대가 실적을 끌어올렸다.',
        rewrite: 'HBM 효과 본 삼성전자…3분기 영업익 9.1조로 껑충',
      },
      {
        title: 'SK하이닉스, 3분기 영업이익 7조300억원…분기 사상 최대',
        summary:
          'SK하이닉스가 3분기 영업이익 7조300억원을 기록해 분기 기준 사상 최대 실적을 냈다고 24일 밝혔다. 고대역폭메모리(HBM) 판매가 전 분기보다 70% 이상 늘었다.',
      },
    ],
    [
      {
        title: '10월 반도체 수출 136억달러…13개월 연속 증가',
        summary:
          '산업통상자원부는 10월 반도체 수출이 136억달러로 전년 같은 달보다 40% 늘어 13개월 연속 증가세를 이어갔다고 1일 밝혔다. 전체 수출은 575억달러로 4.6% 증가했다.',
      },
      {
        title: '9월 반도체 수출 136억달러…추석 연휴에도 역대 9월 최대',
        summary:
          '9월 반도체 수출이 136억달러로 9월 기준 역대 최대를 기록했다고 산업통상자원부가 1일 발표했다. 추석 연휴로 조업일수가 줄었지만 메모리 가격 상승이 이를 상쇄했다.',
      },
    ],
    [
      {
        title: '한국은행, 기준금리 연 3.25%로 0.25%p 인하…3년2개월 만',
        summary:
          '한국은행 금융통화위원회는 11일 기준금리를 연 3.50%에서 3.25%로 0.25%포인트 내렸다. 물가 상승률이 2%대 초반으로 안정되면서 내수 부진에 대응한 것으로 풀이된다.',
      },
      {
        title: '한국은행, 기준금리 연 3.50%로 동결…13차례 연속',
        summary:
          '한국은행 금융통화위원회는 22일 기준금리를 연 3.50%로 동결했다. 가계부채 증가세와 수도권 집값 상승을 고려해 인하 시점을 늦춘 것으로 보인다.',
      },
    ],
    [
      {
        title: '경북 경주서 규모 4.0 지진…올해 최대 규모',
        summary:
          '30일 오전 7시 27분께 경북 경주시 동남동쪽 19㎞ 지역에서 규모 4.0 지진이 발생했다고 기상청이 밝혔다. 진원 깊이는 12㎞로 추정되며 현재까지 피해 신고는 없다.',
      },
      {
        title: '경북 포항서 규모 3.1 지진…경주 지진 이틀 만에 또',
        summary:
          '1일 오후 2시 10분께 경북 포항시 북구 북북서쪽 8㎞ 지역에서 규모 3.1 지진이 발생했다. 기상청은 이틀 전 경주 지진과는 별개의 지진으로 보고 있다.',
      },
    ],
    [
      {
        title: '현대차, 美 조지아 전기차 공장 준공…연 30만대 생산',
        summary:
          '현대자동차그룹이 미국 조지아주 엘라벨에 짓던 전기차 전용 공장 현대차그룹 메타플랜트 아메리카를 준공했다고 26일 밝혔다. 연간 생산능력은 30만대로 향후 50만대까지 늘린다.',
      },
      {
        title: '현대차, 美 앨라배마 공장서 전기차 생산 중단…재고 조정',
        summary:
          '현대자동차가 미국 앨라배마 공장의 전기차 생산 라인을 다음 달부터 한시적으로 멈춘다고 14일 밝혔다. 전기차 수요 둔화로 쌓인 재고를 줄이기 위한 조치다.',
      },
    ],
    [
      {
        title: '손흥민 멀티골…토트넘, 맨유 꺾고 리그 3연승',
        summary:
          '손흥민이 2골을 몰아치며 토트넘 홋스퍼의 3대 1 승리를 이끌었다. 토트넘은 29일 맨체스터 유나이티드와의 프리미어리그 경기에서 승리하며 3연승을 달렸다.',
      },
      {
        title: '손흥민 도움 1개…토트넘, 맨시티에 1대2 역전패',
        summary:
          '손흥민이 도움 1개를 기록했지만 토트넘 홋스퍼가 맨체스터 시티에 1대 2로 역전패했다. 토트넘은 이날 패배로 리그 5위로 내려앉았다.',
      },
    ],
    [
      {
        title: '국회, 내년 예산안 673조원 의결…법정시한 넘겨',
        summary:
          '국회는 10일 본회의를 열어 673조3천억원 규모의 내년도 예산안을 가결했다. 여야 합의가 늦어지면서 법정 처리 시한인 2일을 8일 넘겼다.',
      },
      {
        title: '정부, 내년 예산안 677조원 편성…국회 제출',
        summary:
          '정부는 27일 국무회의에서 677조4천억원 규모의 내년도 예산안을 의결하고 국회에 제출했다. 올해 본예산보다 3.2% 늘어난 규모다.',
      },
    ],
    [
      {
        title: '카카오, 1분기 매출 1조9천억원…역대 1분기 최대',
        summary:
          '카카오가 1분기 연결 매출 1조9천억원, 영업이익 1천203억원을 기록했다고 9일 밝혔다. 광고와 커머스 등 플랫폼 부문이 성장을 이끌었다.',
      },
      {
        title: '네이버, 1분기 매출 2조5천억원…커머스 성장에 최대 실적',
        summary:
          '네이버가 1분기 매출 2조5천억원, 영업이익 4천393억원으로 역대 1분기 최대 실적을 냈다고 3일 밝혔다. 커머스 매출이 전년보다 41% 늘었다.',
      },
    ],
    [
      {
        title: '서울 아파트값 0.11% 올라…27주 연속 상승',
        summary:
          '한국부동산원은 이번 주 서울 아파트 매매가격이 전주 대비 0.11% 올라 27주 연속 상승했다고 밝혔다. 강남 3구와 마포·용산·성동구의 오름폭이 컸다.',
      },
      {
        title: '서울 아파트 전셋값 0.11% 올라…62주 연속 상승',
        summary:
          '서울 아파트 전세가격이 전주보다 0.11% 올라 62주 연속 상승세를 이어갔다고 한국부동산원이 밝혔다. 신규 입주 물량 감소가 전셋값을 밀어 올리고 있다.',
      },
    ],
    [
      {
        title: '태풍 힌남노 제주 상륙…항공편 300편 결항',
        summary:
          '제11호 태풍 힌남노가 6일 새벽 제주에 상륙하면서 제주공항을 오가는 항공편 300여편이 결항됐다. 제주 전역에 태풍경보가 내려졌고 정전 피해도 잇따랐다.',
      },
      {
        title: '태풍 카눈 북상에 제주 항공편 300편 결항…대부분 지역 강풍',
        summary:
          '제6호 태풍 카눈이 북상하면서 9일 제주공항 출발·도착 항공편 300여편이 결항됐다. 기상청은 10일 경남 해안에 상륙할 것으로 내다봤다.',
      },
    ],
    [
      {
        title: '대통령실, 한미 정상회담 내달 워싱턴서 개최 발표',
        summary:
          '대통령실은 한미 정상회담이 다음 달 중순 미국 워싱턴에서 열린다고 12일 발표했다. 두 정상은 반도체 공급망과 북한 문제를 주로 논의할 예정이다.',
      },
      {
        title: '한미 외교장관 회담…북한 미사일 발사 대응 논의',
        summary:
          '한미 외교장관이 12일 워싱턴에서 회담을 열고 북한의 대륙간탄도미사일 발사에 대한 공동 대응 방안을 논의했다. 양측은 안보리 추가 제재 필요성에 공감했다.',
      },
    ],
    [
      {
        title: '코스피, 외국인 매수에 2,600선 회복…1.8% 상승',
        summary:
          '코스피가 외국인의 대규모 순매수에 힘입어 전 거래일보다 1.8% 오른 2,603.42에 마감했다. 외국인은 유가증권시장에서 8천억원어치를 순매수했다.',
      },
      {
        title: '코스피, 외국인 매도에 2,600선 붕괴…1.8% 하락',
        summary:
          '코스피가 외국인의 매도 공세에 밀려 전 거래일보다 1.8% 내린 2,587.10에 장을 마쳤다. 외국인은 유가증권시장에서 7천억원어치를 순매도했다.',
      },
    ],
    [
      {
        title: '김철수 의원, 부산시장 출마 선언…"해양수도 완성하겠다"',
        summary:
          '김철수 의원이 3일 부산시청 앞에서 기자회견을 열고 내년 지방선거 부산시장 출마를 공식 선언했다. 김 의원은 해양수도 완성과 청년 일자리 확대를 공약으로 내걸었다.',
        rewrite: '김철수, 부산시장 도전 공식화…"해양수도 완성"',
      },
      {
        title: '김철수 의원, 부산시장 불출마 선언…"당의 결정 따르겠다"',
        summary:
          '김철수 의원이 3일 부산시청 앞에서 기자회견을 열고 내년 지방선거 부산시장 선거에 나서지 않겠다고 밝혔다. 김 의원은 당의 결정을 따르고 총선 준비에 전념하겠다고 말했다.',
      },
    ],
    [
      {
        title: '[부산] 아파트 화재로 주민 50여명 대피',
        summary:
          '3일 오전 부산 해운대구의 한 아파트 12층에서 불이 나 주민 50여명이 대피했다. 불은 1시간 만에 꺼졌으며 소방당국은 정확한 화재 원인을 조사하고 있다.',
      },
      {
        title: '[인천] 아파트 화재로 주민 50여명 대피',
        summary:
          '3일 오전 인천 연수구의 한 아파트 12층에서 불이 나 주민 50여명이 대피했다. 불은 1시간 만에 꺼졌으며 소방당국은 정확한 화재 원인을 조사하고 있다.',
      },
    ],
    [
      {
        title: '통계청, 잘못된 고용통계 바로잡는다…취업자 수 재발표',
        summary:
          '통계청이 지난달 발표한 고용동향에서 취업자 수 집계에 오류가 있었다며 수정 통계를 다시 발표하기로 했다고 5일 밝혔다. 오류는 표본 가중치 적용 과정에서 생겼다.',
        rewrite: '통계청, 고용통계 바로잡는다…취업자 수 재발표',
      },
      {
        title: '통계청, 물가통계 개편…생활물가 품목 늘린다',
        summary:
          '통계청이 소비자물가지수 산정 방식을 개편해 생활물가 품목을 늘리기로 했다고 5일 밝혔다. 개편된 지수는 내년 1월 발표분부터 적용된다.',
      },
    ],
  ],
  en: [
    [
      {
        title: 'Samsung third-quarter operating profit jumps 277% on memory chip rebound',
        summary:
          'Samsung Electronics said on Tuesday its third-quarter operating profit rose 277% from a year earlier to 9.1 trillion won, as memory chip prices recovered and sales of high-bandwidth memory grew.',
        rewrite: 'Memory rebound lifts Samsung profit nearly fourfold in third quarter',
      },
      {
        title: 'SK Hynix posts record third-quarter profit as AI chip demand soars',
        summary:
          'SK Hynix reported a record third-quarter operating profit of 7.03 trillion won on Thursday, as sales of high-bandwidth memory for AI chips rose more than 70% from the previous quarter.',
      },
    ],
    [
      {
        title: 'US tightens curbs on AI chip exports to China, adding 140 companies to entity list',
        summary:
          'The Biden administration on Monday expanded restrictions on exports of advanced AI chips and chipmaking tools to China, adding 140 companies to its entity list.',
      },
      {
        title: 'China bans exports of gallium and germanium to US in chip dispute',
        summary:
          'China on Tuesday banned exports of gallium, germanium and antimony to the United States, a day after Washington tightened curbs on AI chips and added 140 companies to its entity list.',
      },
    ],
    [
      {
        title: 'Fed cuts rates by quarter point, signals slower pace of easing',
        summary:
          'The Federal Reserve lowered its benchmark interest rate by a quarter of a percentage point to a range of 4.25% to 4.5% on Wednesday and signaled it would cut more slowly next year.',
      },
      {
        title: 'Fed holds rates steady, sees two cuts later this year',
        summary:
          'The Federal Reserve kept its benchmark interest rate in a range of 4.25% to 4.5% on Wednesday and policymakers still projected two quarter-point cuts by the end of the year.',
      },
    ],
    [
      {
        title: 'Magnitude 7.5 earthquake strikes off Japan, tsunami warning issued',
        summary:
          'A magnitude 7.5 earthquake struck off the coast of Ishikawa prefecture on Monday afternoon, the Japan Meteorological Agency said, triggering a major tsunami warning for the Sea of Japan coast.',
      },
      {
        title: 'Magnitude 6.8 earthquake strikes Taiwan, tsunami warning lifted',
        summary:
          "A magnitude 6.8 earthquake struck eastern Taiwan on Wednesday morning, the island's weather bureau said, and a tsunami warning for nearby islands was lifted an hour later.",
      },
    ],
    [
      {
        title: 'Tesla recalls 2 million vehicles over Autopilot safety controls',
        summary:
          'Tesla is recalling more than 2 million vehicles in the United States to install new safeguards in its Autopilot system, after a two-year investigation by the top US auto safety regulator.',
      },
      {
        title: 'Tesla deliveries fall for first time in four years, missing estimates',
        summary:
          'Tesla delivered 386,810 vehicles in the first quarter, down 8.5% from a year earlier, the electric carmaker said on Tuesday, its first year-on-year decline in deliveries in four years.',
      },
    ],
    [
      {
        title: 'Real Madrid beat Dortmund 2-0 to win 15th Champions League title',
        summary:
          'Real Madrid won a record-extending 15th European Cup on Saturday, beating Borussia Dortmund 2-0 at Wembley with late goals from Dani Carvajal and Vinicius Junior.',
      },
      {
        title: 'Real Madrid beat Atalanta 2-0 to win UEFA Super Cup',
        summary:
          'Real Madrid won the UEFA Super Cup in Warsaw on Wednesday, beating Atalanta 2-0 with second-half goals from Federico Valverde and Kylian Mbappe on his debut.',
      },
    ],
    [
      {
        title: 'House passes $1.2 trillion spending package to avert government shutdown',
        summary:
          'The US House of Representatives on Friday passed a $1.2 trillion package of spending bills to fund the government through September, sending it to the Senate hours before a shutdown deadline.',
      },
      {
        title: 'Senate passes $1.2 trillion spending package, Biden to sign',
        summary:
          'The US Senate early on Saturday passed a $1.2 trillion package of spending bills, ending the threat of a partial government shutdown, and President Joe Biden said he would sign it.',
      },
    ],
    [
      {
        title: 'Nvidia market value tops $3 trillion, overtaking Apple',
        summary:
          "Nvidia's stock market value rose above $3 trillion for the first time on Wednesday, overtaking Apple to become the second most valuable company in the world after Microsoft.",
      },
      {
        title: 'Nvidia reports quarterly revenue of $30 billion, beats estimates',
        summary:
          "Nvidia on Wednesday reported second-quarter revenue of $30 billion, up 122% from a year earlier, beating analysts' estimates as demand for its AI chips stayed strong.",
      },
    ],
    [
      {
        title: 'Oil prices jump 3% after OPEC+ agrees to extend output cuts',
        summary:
          'Oil prices rose about 3% on Monday after OPEC+ agreed to extend its voluntary output cuts of 2.2 million barrels per day until the end of the first quarter.',
      },
      {
        title: 'Oil prices fall 3% as OPEC+ delays decision on output cuts',
        summary:
          'Oil prices fell about 3% on Wednesday after OPEC+ postponed its ministerial meeting, raising doubts over whether the group would agree to deepen output cuts of 2.2 million barrels per day.',
      },
    ],
    [
      {
        title: 'Hurricane Milton makes landfall in Florida as Category 3 storm',
        summary:
          "Hurricane Milton made landfall near Siesta Key on Florida's Gulf Coast on Wednesday night as a Category 3 storm, bringing destructive winds and a life-threatening storm surge to the Tampa Bay area.",
      },
      {
        title: 'Hurricane Helene makes landfall in Florida as Category 4 storm',
        summary:
          "Hurricane Helene made landfall in Florida's Big Bend region on Thursday night as a Category 4 storm, with maximum sustained winds of 140 mph, the National Hurricane Center said.",
      },
    ],
    [
      {
        title: 'UK inflation falls to 2% for first time in nearly three years',
        summary:
          "British consumer price inflation fell to 2.0% in May, the Bank of England's target, for the first time in nearly three years, the Office for National Statistics said on Wednesday.",
      },
      {
        title: 'UK inflation rises to 2.3% in October, above Bank of England target',
        summary:
          "British consumer price inflation rose to 2.3% in October from 1.7% in September, above the Bank of England's 2% target, the Office for National Statistics said on Wednesday.",
      },
    ],
    [
      {
        title: 'Microsoft to invest $2.9 billion in Japan for AI and cloud',
        summary:
          'Microsoft said on Wednesday it would invest $2.9 billion over two years to expand its AI and cloud infrastructure in Japan, its biggest investment in the country in its 46-year history.',
      },
      {
        title: 'Microsoft to invest $2.2 billion in Malaysia for AI and cloud',
        summary:
          'Microsoft said on Thursday it would invest $2.2 billion over the next four years in cloud and AI infrastructure in Malaysia, the latest in a string of investments in Southeast Asia.',
      },
    ],
    [
      {
        title: 'Apple in talks to buy streaming service Fitwave, sources say',
        summary:
          'Apple Inc is in advanced talks to acquire the fitness streaming service Fitwave for about $1.5 billion, three people familiar with the matter said on Monday.',
      },
      {
        title: 'Apple not in talks to buy streaming service Fitwave, company says',
        summary:
          'Apple Inc is not in talks to acquire the fitness streaming service Fitwave, a company spokesperson said on Monday, denying a report of a $1.5 billion deal.',
      },
    ],
    [
      {
        title: "Asiana, South Korea's No. 2 carrier, approves merger with Korean Air",
        summary:
          'Asiana Airlines said on Friday its board had approved the sale of its stake to Korean Air, clearing the last internal hurdle for a merger that regulators approved after a four-year review.',
        rewrite: 'Asiana approves merger with Korean Air',
      },
      {
        title: "Jeju Air, South Korea's biggest budget carrier, orders 40 Boeing jets",
        summary:
          'Jeju Air said on Friday it had ordered 40 Boeing 737 MAX jets worth about $5 billion at list prices, as it expands routes to Japan and Southeast Asia.',
      },
    ],
  ],
  ja: [
    [
      {
        title: 'トヨタ、4～9月期の営業利益2.8兆円　円安で過去最高',
        summary:
          'トヨタ自動車は6日、2024年4～9月期の連結営業利益が前年同期比2%増の2兆8千億円になったと発表した。円安が利益を押し上げ、上期として過去最高を更新した。',
        rewrite: '円安追い風、トヨタ上期営業益2.8兆円で最高更新',
      },
      {
        title: 'ホンダ、4～9月期の営業利益7.9千億円　二輪好調で最高',
        summary:
          'ホンダは6日、2024年4～9月期の連結営業利益が前年同期比15%減の7千9百億円になったと発表した。二輪事業は好調だったが、中国での販売不振が響いた。',
      },
    ],
    [
      {
        title: '日銀、政策金利を0.25%に引き上げ　国債買い入れ減額も決定',
        summary:
          '日本銀行は31日の金融政策決定会合で、政策金利を0～0.1%から0.25%程度に引き上げることを決めた。長期国債の買い入れを段階的に減らす計画も決定した。',
      },
      {
        title: '日銀、政策金利0.25%を維持　追加利上げは見送り',
        summary:
          '日本銀行は20日の金融政策決定会合で、政策金利を0.25%程度に据え置くことを決めた。米国経済の先行きなど不確実性が高いとして、追加利上げを見送った。',
      },
    ],
    [
      {
        title: '能登半島で震度7　石川県に大津波警報',
        summary:
          '1日午後4時10分ごろ、石川県能登地方を震源とする地震があり、同県志賀町で震度7を観測した。気象庁は石川県能登に大津波警報を発表した。',
      },
      {
        title: '能登半島で震度5強　津波の心配なし',
        summary:
          '26日午前6時半ごろ、石川県能登地方を震源とする地震があり、同県輪島市で震度5強を観測した。気象庁によると、この地震による津波の心配はない。',
      },
    ],
    [
      {
        title: '大谷翔平、50本塁打50盗塁達成　大リーグ史上初',
        summary:
          'ドジャースの大谷翔平選手は19日、マーリンズ戦で今季50号本塁打を放ち、51盗塁と合わせて大リーグ史上初の「50本塁打50盗塁」を達成した。',
      },
      {
        title: '大谷翔平、今季40本塁打40盗塁達成　史上6人目',
        summary:
          'ドジャースの大谷翔平選手は23日、レイズ戦でサヨナラ満塁本塁打を放ち、今季40号に到達した。40盗塁と合わせて史上6人目の「40本塁打40盗塁」を達成した。',
      },
    ],
    [
      {
        title: '衆院選、自民・公明が過半数割れ　15年ぶり',
        summary:
          '第50回衆院選は27日投開票され、自民、公明両党の獲得議席が過半数の233を下回ることが確実になった。与党の過半数割れは2009年以来15年ぶり。',
      },
      {
        title: '参院選、自民・公明が過半数維持　改選議席は減少',
        summary:
          '第26回参院選は10日投開票され、自民、公明両党は非改選と合わせて参院の過半数を維持した。ただ自民党の改選議席は前回を下回った。',
      },
    ],
    [
      {
        title: 'TSMC熊本第1工場が開所　国内半導体生産の拠点に',
        summary:
          '台湾積体電路製造（TSMC）が熊本県菊陽町に建設した第1工場の開所式が24日行われた。年内に出荷を始め、日本の半導体供給網の強化につなげる。',
      },
      {
        title: 'TSMC熊本第2工場の着工を延期　交通渋滞に配慮',
        summary:
          '台湾積体電路製造（TSMC）は熊本県菊陽町に計画する第2工場の着工を延期すると発表した。周辺の交通渋滞への対策を優先するという。',
      },
    ],
    [
      {
        title: '日経平均、4万円台を初回復　半導体株に買い',
        summary:
          '4日の東京株式市場で日経平均株価が初めて4万円台に乗せた。前週末比198円高の4万109円で取引を終え、半導体関連株が相場をけん引した。',
      },
      {
        title: '日経平均、4451円安で過去最大の下げ幅　半導体株に売り',
        summary:
          '5日の東京株式市場で日経平均株価が急落し、前週末比4451円安の3万1458円で取引を終えた。下げ幅は1987年のブラックマンデーを超え過去最大となった。',
      },
    ],
    [
      {
        title: '台風10号、鹿児島に上陸　記録的な暴風のおそれ',
        summary:
          '強い台風10号は29日朝、鹿児島県薩摩川内市付近に上陸した。気象庁は特別警報を発表し、記録的な暴風や高潮に最大級の警戒を呼びかけている。',
      },
      {
        title: '台風7号、関東に接近　新幹線の計画運休を決定',
        summary:
          '強い台風7号は16日、関東地方に接近する見通しだ。JR東海は東海道新幹線の東京－名古屋間で終日の計画運休を決めた。',
      },
    ],
    [
      {
        title: '東京都の消費者物価、11月は2.2%上昇　伸び拡大',
        summary:
          '総務省が29日発表した11月の東京都区部の消費者物価指数は、生鮮食品を除く総合が前年同月比2.2%上昇した。電気・ガス代の補助縮小で伸び率が拡大した。',
      },
      {
        title: '全国消費者物価、10月は2.3%上昇　伸び鈍化',
        summary:
          '総務省が22日発表した10月の全国消費者物価指数は、生鮮食品を除く総合が前年同月比2.3%上昇した。政府の電気・ガス代補助の再開で伸び率が鈍化した。',
      },
    ],
    [
      {
        title: 'ソフトバンクG、4～6月期の最終損益1742億円の赤字',
        summary:
          'ソフトバンクグループが8日発表した2024年4～6月期連結決算は、最終損益が1742億円の赤字だった。ビジョン・ファンドの投資損益が悪化した。',
      },
      {
        title: 'ソフトバンクG、7～9月期の最終損益1兆円超の黒字',
        summary:
          'ソフトバンクグループが12日発表した2024年7～9月期連結決算は、最終損益が1兆1766億円の黒字だった。保有株の評価益が膨らんだ。',
      },
    ],
    [
      {
        title: '日本代表、中国に7－0で大勝　W杯最終予選',
        summary:
          'サッカーの2026年ワールドカップアジア最終予選が5日、埼玉スタジアムで行われ、日本代表は中国代表に7－0で大勝した。三笘薫選手らが得点を挙げた。',
      },
      {
        title: '日本代表、バーレーンに5－0で快勝　W杯最終予選',
        summary:
          'サッカーの2026年ワールドカップアジア最終予選が10日、リファーで行われ、日本代表はバーレーン代表に5－0で快勝した。上田綺世選手が2得点を挙げた。',
      },
    ],
    [
      {
        title: '政府、半導体に10兆円超の支援表明　2030年度まで',
        summary:
          '石破茂首相は11日、半導体や人工知能（AI）分野に2030年度までに10兆円以上の公的支援を行うと表明した。ラピダスへの支援も含まれる。',
      },
      {
        title: '政府、ラピダスに5900億円の追加支援を決定',
        summary:
          '経済産業省は2日、次世代半導体の量産を目指すラピダスに最大5900億円を追加で支援すると発表した。累計の支援額は1兆7千億円を超える。',
      },
    ],
    [
      {
        title: '山田知事、次期衆院選に出馬表明　地元で会見',
        summary:
          '大阪府の山田太郎知事は5日、府庁で記者会見を開き、次期衆院選に大阪1区から出馬する意向を表明した。知事は任期途中で辞職する。',
      },
      {
        title: '山田知事、次期衆院選に不出馬表明　地元で会見',
        summary:
          '大阪府の山田太郎知事は5日、府庁で記者会見を開き、次期衆院選に大阪1区から出馬しない意向を表明した。知事は任期を全うする。',
      },
    ],
    [
      {
        title: '警視庁、未明に都内で一斉捜索　特殊詐欺の容疑者5人逮捕',
        summary:
          '警視庁は12日未明、特殊詐欺グループの拠点とみられる都内の8カ所を一斉に捜索し、容疑者5人を逮捕した。被害総額は約3億円に上るとみられる。',
        rewrite: '警視庁、都内で一斉捜索　特殊詐欺の容疑者5人逮捕',
      },
      {
        title: '大阪府警、特殊詐欺の受け子3人を逮捕　高齢者から1億円',
        summary:
          '大阪府警は12日、高齢者から現金をだまし取ったとして、特殊詐欺グループの受け子の男3人を逮捕した。被害額は約1億円に上る。',
      },
    ],
  ],
};

/** Outlets that republish stories, per language (the first outlet of a seed is the first). */
export const OUTLETS: Record<Language, readonly string[]> = {
  ko: ['연합뉴스', '뉴시스', '뉴스1', '한국경제', '매일경제', '머니투데이', '이데일리', '서울경제'],
  en: ['Reuters', 'Associated Press', 'Bloomberg', 'CNBC', 'Yahoo Finance', 'MarketWatch', 'AFP', 'Nasdaq'],
  ja: ['共同通信', '時事通信', '日本経済新聞', '朝日新聞', '毎日新聞', '読売新聞', '産経新聞', 'NHK'],
};

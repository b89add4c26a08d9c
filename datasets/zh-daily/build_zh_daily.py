"""Writes zh_daily.json (the LongMemEval format) from the conversations below, written by hand for this project.

    python datasets/zh-daily/build_zh_daily.py     # rewrites datasets/zh-daily/zh_daily.json and prints its sha256

Each user's sessions are one history; each question's haystack is the whole history of its user, and a turn
is evidence (``has_answer``) for a question when it carries one of the question's labels. A session is in
``answer_session_ids`` when it holds an evidence turn. Dates get their weekday here, so they cannot be wrong.
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from pathlib import Path

OUT = Path(__file__).resolve().with_name("zh_daily.json")

# user -> (sessions, questions); a session: (id, "YYYY-MM-DD HH:MM", turns); a turn: (role, text[, labels]);
# a question: (id, type, question, answer, "YYYY-MM-DD HH:MM", labels)
USERS: dict[str, tuple[list, list]] = {}

USERS["li"] = ([
    ("li_s1", "2024-03-04 20:10", [
        ("u", "最近想换一台笔记本电脑，旧的 ThinkPad T480 已经用了六年，风扇很吵。", "laptop_old"),
        ("a", "六年确实该换了。你主要用它做什么？写代码、剪视频还是日常办公？"),
        ("u", "主要写代码，用 VS Code 和 Docker，偶尔剪一下 vlog。预算大概 9000 元左右，最多不超过一万。", "laptop_budget"),
        ("a", "这个预算可以看 MacBook Air M3 16GB，或者 ThinkPad X1 Carbon。跑 Docker 的话内存建议至少 16GB。"),
        ("u", "我现在比较倾向 X1 Carbon，毕竟用惯了小红点键盘。", "laptop_choice"),
        ("a", "习惯很重要。X1 Carbon 的键盘手感确实是同类里最好的之一，可以去线下店试一试。"),
        ("u", "好，这周末去徐家汇的联想店看看。", "laptop_choice"),
        ("a", "祝你挑到合适的！有问题随时问我。"),
    ]),
    ("li_s2", "2024-03-09 09:30", [
        ("u", "早上好！帮我想想周末早餐做什么吧，冰箱里有鸡蛋、吐司和牛油果。"),
        ("a", "可以做牛油果吐司配溏心蛋：吐司烤脆，牛油果压泥加盐和黑胡椒，最后放一个煮 6 分半的鸡蛋。"),
        ("u", "听起来不错。顺便说一下，我每天早上都要喝一杯燕麦拿铁，不加糖，牛奶我喝了会胀气。", "coffee"),
        ("a", "记住了：燕麦拿铁、不加糖、避开牛奶。燕麦奶选 Oatly 咖啡师版打奶泡效果比较好。"),
        ("u", "对，我家里用的就是 Oatly，配一台 Delonghi 的半自动咖啡机。", "coffee"),
        ("a", "那很方便。豆子可以试试中深烘的，和燕麦奶更搭。"),
    ]),
    ("li_s3", "2024-03-16 21:45", [
        ("u", "去店里试了 X1 Carbon，结果发现屏幕有点暗，续航也一般。我决定改买 MacBook Air M3 了，16GB 内存 512GB 硬盘。", "laptop_choice laptop_final"),
        ("a", "M3 的续航和屏幕确实更好。16GB + 512GB 这个配置教育优惠大概 9499 元，稍微超一点预算。"),
        ("u", "我有员工内购，算下来 8999 元，刚好在预算里。", "laptop_price"),
        ("a", "太好了！到手后记得装 Homebrew 和 OrbStack，跑 Docker 比 Docker Desktop 省资源。"),
        ("u", "OrbStack 我还没用过，回头试试。", "orbstack"),
        ("a", "它启动很快，对 Apple Silicon 优化得不错。"),
    ]),
    ("li_s4", "2024-03-22 22:15", [
        ("u", "我想开始学 Rust，工作里有个服务想用它重写。有什么入门书推荐吗？"),
        ("a", "推荐先看官方的《Rust 程序设计语言》（The Rust Programming Language），中文版免费在线；然后做 Rustlings 的练习题。", "rust_book"),
        ("u", "好的，我每天晚上花一个小时来学。", "rust_plan"),
        ("a", "坚持很重要。学到所有权（ownership）和借用那两章会比较难，别着急。"),
        ("u", "另外问一下，我家猫豆豆最近老是半夜跑酷，有什么办法吗？它是一只两岁的英短。", "cat"),
        ("a", "睡前陪豆豆玩 15 分钟逗猫棒，消耗精力后再喂晚饭，通常能睡得安稳一些。"),
        ("u", "哈哈，我今晚就试试。"),
    ]),
    ("li_s5", "2024-03-30 19:00", [
        ("u", "四月中旬公司放年假，我打算去成都玩五天，吃火锅、看大熊猫。", "trip_first"),
        ("a", "成都很适合！大熊猫基地建议早上 8 点前到，熊猫最活跃。"),
        ("u", "住哪里比较方便？", "trip_first"),
        ("a", "春熙路或太古里附近交通方便，去各个景点都不远。"),
        ("u", "好，我先看看 Airbnb 上的民宿。"),
        ("a", "好的，记得看一下取消政策。"),
    ]),
    ("li_s6", "2024-04-06 20:30", [
        ("u", "计划有变：成都的朋友那周正好出差，我改去重庆了，4 月 15 日出发，玩四天。", "trip_final"),
        ("a", "重庆也很好玩！洪崖洞、李子坝轻轨穿楼、磁器口都值得去，火锅也不输成都。"),
        ("u", "我吃辣一般，中辣就够了。", "spicy"),
        ("a", "那点锅底时选微辣或中辣，再要一个鸳鸯锅更保险。"),
        ("u", "行，民宿我已经订在解放碑附近了，一晚 380 元。", "trip_final trip_hotel"),
        ("a", "解放碑是市中心，出行很方便。"),
    ]),
    ("li_s7", "2024-04-25 07:20", [
        ("u", "从重庆回来了，开始认真跑步。我报名了 11 月 3 日的上海半程马拉松！", "halfmarathon"),
        ("a", "恭喜！离比赛还有半年多，时间很充裕。你现在每周跑多少？"),
        ("u", "每周三次，每次 5 公里左右，配速 6 分 30 秒。不过我右膝盖以前受过伤，跑多了会疼。", "running knee"),
        ("a", "膝盖有旧伤的话，每周跑量增加不要超过 10%，并且加上臀腿力量训练。鞋子选缓震好的。"),
        ("u", "我现在穿的是一双很旧的 Nike Pegasus 38。", "running_shoes"),
        ("a", "可以考虑换成 ASICS Gel-Nimbus 或 Nike Invincible 这类高缓震跑鞋，对膝盖更友好。", "running_shoes"),
    ]),
    ("li_s8", "2024-05-06 22:40", [
        ("u", "Rust 学了一个多月了，所有权那一章终于搞懂了，正在做 Rustlings 的第 40 题。", "rust_progress"),
        ("a", "进步很快！接下来可以试着用 Axum 写一个小的 HTTP 服务练手。"),
        ("u", "好主意。对了，新的 MacBook 用起来很顺，OrbStack 也装上了，确实比 Docker Desktop 快。", "orbstack"),
        ("a", "听到这个很开心。Axum 配合 Tokio 在 M3 上编译也很快。"),
        ("u", "最近喝咖啡喝到胃有点不舒服，我打算把每天的燕麦拿铁改成下午的一杯绿茶。", "coffee_change"),
        ("a", "这个调整很好。绿茶咖啡因少一些，下午喝也不太影响睡眠。"),
    ]),
], [
    ("li_laptop", "knowledge-update", "我最后决定买哪款笔记本电脑？",
     "MacBook Air M3（16GB + 512GB）", "2024-05-10 20:00", "laptop_choice laptop_final"),
    ("li_budget", "single-session-user", "我买新电脑的预算是多少？", "9000 元左右，最多不超过一万", "2024-05-10 20:00", "laptop_budget"),
    ("li_rust_book", "single-session-assistant", "你之前推荐我学 Rust 先看哪本书？",
     "官方的《Rust 程序设计语言》，再做 Rustlings 练习", "2024-05-10 20:00", "rust_book"),
    ("li_trip", "knowledge-update", "我四月份年假最后去了哪个城市？", "重庆（原计划成都）", "2024-05-10 20:00", "trip_first trip_final"),
    ("li_cat", "single-session-user", "我的猫叫什么名字，是什么品种？", "豆豆，两岁的英短", "2024-05-10 20:00", "cat"),
    ("li_race", "temporal-reasoning", "我报名的半程马拉松是哪一天，在哪个城市？", "11 月 3 日，上海半程马拉松", "2024-05-10 20:00", "halfmarathon"),
    ("li_shoes", "single-session-preference", "能不能给我一些建议，换一双什么样的跑鞋？",
     "高缓震跑鞋（如 ASICS Gel-Nimbus、Nike Invincible），照顾右膝旧伤", "2024-05-10 20:00", "running knee running_shoes"),
    ("li_drink", "knowledge-update", "我现在每天喝什么饮品？", "下午一杯绿茶（之前是不加糖的燕麦拿铁）", "2024-05-10 20:00", "coffee coffee_change"),
    ("li_price", "single-session-user", "我买 MacBook 实际花了多少钱？", "8999 元（员工内购）", "2024-05-10 20:00", "laptop_price"),
])

USERS["wang"] = ([
    ("wang_s1", "2024-06-02 21:00", [
        ("u", "我儿子小宇今年六岁，上个月开始学钢琴，每周六上午一节课，一节课 300 元。", "kid_class_first"),
        ("a", "六岁开始学钢琴很合适。刚开始每天练 15 到 20 分钟就够了。"),
        ("u", "他坐不住，每次练琴都要哄半天。", "kid_class_first"),
        ("a", "可以把练习拆成几个 5 分钟，每完成一段贴一张贴纸，孩子会更有成就感。"),
        ("u", "好办法，我试试。"),
        ("a", "慢慢来，兴趣比进度更重要。"),
    ]),
    ("wang_s2", "2024-06-08 12:30", [
        ("u", "帮我想一个晚饭菜单吧，三口之家。提醒一下，我乳糖不耐受，而且我们全家都不吃香菜。", "diet"),
        ("a", "可以做番茄炒蛋、清蒸鲈鱼、蒜蓉西兰花，再来一个冬瓜排骨汤。全程不用奶制品和香菜。"),
        ("u", "好。小宇不太爱吃青菜，有什么办法吗？"),
        ("a", "可以把西兰花切小朵做成「小树林」造型，或者让他一起洗菜，参与感强了会更愿意吃。"),
        ("u", "哈哈，他肯定喜欢「小树林」。"),
        ("a", "祝你们晚餐愉快！"),
    ]),
    ("wang_s3", "2024-06-15 22:10", [
        ("u", "暑假想带全家去三亚玩一周，7 月 20 号左右出发。", "summer_trip_first"),
        ("a", "三亚 7 月很热，但海边很舒服。亚龙湾的酒店适合带孩子，沙滩比较干净。"),
        ("u", "我们预算一共 1.5 万元，包括机票和酒店。", "summer_budget"),
        ("a", "暑期三亚机票和酒店都贵，三个人一周 1.5 万有点紧，建议尽早订机票。"),
        ("u", "好，我这两天看看携程上的价格。", "summer_trip_first"),
        ("a", "可以设置一个降价提醒。"),
    ]),
    ("wang_s4", "2024-06-22 20:45", [
        ("u", "查了一下三亚太贵了，机票加酒店要两万多。我们改去青岛了，7 月 22 日出发，坐高铁去。", "summer_trip_final"),
        ("a", "青岛夏天凉快，海鲜也多！可以去金沙滩、八大关和海洋极地世界，小宇一定会喜欢。"),
        ("u", "海鲜我可以吃，就是别推荐奶油类的菜。", "diet"),
        ("a", "明白，青岛的辣炒蛤蜊、清蒸海鲜都不含奶，放心吃。"),
        ("u", "酒店订在了五四广场附近，四晚一共 2400 元。", "summer_trip_final"),
        ("a", "五四广场离海边和地铁都很近，很方便。"),
    ]),
    ("wang_s5", "2024-07-06 21:30", [
        ("u", "钢琴课学了两个月，小宇实在没兴趣，我们决定停了，改学围棋，周日下午上课。", "kid_class_final"),
        ("a", "找到孩子感兴趣的最重要。围棋能锻炼专注力和计算能力，很适合六岁的孩子。"),
        ("u", "你能推荐一些适合孩子的围棋入门书吗？"),
        ("a", "推荐《聂卫平围棋道场》系列和《围棋入门》（少儿版），再配合「弈客少儿围棋」App 做题。", "go_books"),
        ("u", "好的，我去当当网买。"),
        ("a", "祝小宇学得开心！"),
    ]),
    ("wang_s6", "2024-07-13 19:40", [
        ("u", "工作上要做很多成绩统计，我想学 Excel 的数据透视表，有什么推荐的学习方法吗？", "excel"),
        ("a", "可以从 B 站上的免费教程开始，先学数据透视表的行、列、值三个区域，再用你们班的成绩表练习。", "excel"),
        ("u", "我是小学数学老师，带两个班，每次考完都要算平均分和及格率。", "job"),
        ("a", "那数据透视表正好用得上：把班级放在行，把分数放在值，选「平均值」就能一键算出来。"),
        ("u", "太实用了。"),
        ("a", "熟练以后还可以试试条件格式，把不及格的分数标红。"),
    ]),
    ("wang_s7", "2024-07-28 22:00", [
        ("u", "从青岛回来了！小宇在海洋极地世界看到白鲸，开心坏了。", "summer_trip_final"),
        ("a", "太好了！白鲸表演确实很受小朋友欢迎。"),
        ("u", "接下来想换一辆车，现在开的是 2015 年的大众朗逸。在比亚迪秦 PLUS 和特斯拉 Model 3 之间犹豫。", "car_first"),
        ("a", "秦 PLUS DM-i 价格 10 万出头，油耗很低；Model 3 是纯电，智能化更好但价格 23 万左右。你每天通勤多远？"),
        ("u", "单程 18 公里，家里小区可以装充电桩。预算不想超过 20 万。", "car_budget"),
        ("a", "那 Model 3 超预算了。可以再看看比亚迪海豹，纯电、17 万左右，续航 550 公里。", "car_rec"),
    ]),
    ("wang_s8", "2024-08-10 20:20", [
        ("u", "车定了，最后买了比亚迪海豹，落地 17.8 万，下周提车。", "car_final"),
        ("a", "恭喜！海豹操控不错，记得先申请小区的充电桩安装。"),
        ("u", "充电桩已经装好了，是随车送的 7kW 壁挂桩。", "car_final"),
        ("a", "太好了，晚上充电一晚就能充满。"),
        ("u", "另外小宇的围棋老师说他进步很快，下个月可以考 25 级了。", "go_level"),
        ("a", "真棒！考级前可以多做一些死活题练习。"),
    ]),
], [
    ("wang_class", "knowledge-update", "我儿子现在在上什么兴趣班？",
     "围棋（周日下午；之前学过两个月钢琴）", "2024-08-15 21:00", "kid_class_first kid_class_final"),
    ("wang_diet", "single-session-preference", "有什么推荐的家常晚餐菜谱适合我们家吗？",
     "不含奶制品、不放香菜的家常菜（她乳糖不耐受，全家不吃香菜）", "2024-08-15 21:00", "diet"),
    ("wang_trip", "knowledge-update", "我们家暑假最后去哪里旅行了？",
     "青岛（原计划三亚，嫌贵改了）", "2024-08-15 21:00", "summer_trip_first summer_trip_final"),
    ("wang_budget", "single-session-user", "暑假旅行我们原来的预算是多少？", "一共 1.5 万元，包括机票和酒店", "2024-08-15 21:00", "summer_budget"),
    ("wang_go_books", "single-session-assistant", "你之前推荐过哪些围棋入门书？",
     "《聂卫平围棋道场》系列、少儿版《围棋入门》，配合弈客少儿围棋 App", "2024-08-15 21:00", "go_books"),
    ("wang_car", "knowledge-update", "我最后买了什么车，花了多少钱？", "比亚迪海豹，落地 17.8 万", "2024-08-15 21:00", "car_first car_final"),
    ("wang_car_rec", "single-session-assistant", "我说预算不到 20 万的时候，你当时建议的是哪款车？",
     "比亚迪海豹（纯电，17 万左右，续航 550 公里）", "2024-08-15 21:00", "car_rec"),
    ("wang_job", "single-session-user", "我是做什么工作的？", "小学数学老师，带两个班", "2024-08-15 21:00", "job"),
    ("wang_old_car", "single-session-user", "我换车之前开的是什么车？", "2015 年的大众朗逸", "2024-08-15 21:00", "car_first"),
])

USERS["chen"] = ([
    ("chen_s1", "2024-02-19 23:10", [
        ("u", "我是清华的研二学生，做多模态大模型方向，毕业论文初稿 5 月 20 日要交。", "thesis_first"),
        ("a", "时间还有三个月，可以先把实验部分定下来，再写相关工作。你现在进度如何？"),
        ("u", "实验还差两组 ablation，卡在 GPU 不够，实验室只有 4 张 A100。", "gpu"),
        ("a", "可以考虑用 LoRA 降低显存，或者把 batch size 调小配合梯度累积。"),
        ("u", "好，我先试试 LoRA。"),
        ("a", "加油！有问题随时问。"),
    ]),
    ("chen_s2", "2024-02-26 18:30", [
        ("u", "最近想规律健身，计划每周去三次健身房，周一、三、五晚上。", "gym"),
        ("a", "很好的计划。新手可以从全身训练开始，每次 45 分钟到一小时。"),
        ("u", "对了，我对花生严重过敏，蛋白棒之类的要注意什么？", "allergy"),
        ("a", "买蛋白棒和蛋白粉一定看配料表和「可能含有花生」的提示，很多坚果味的产品都含花生。"),
        ("u", "明白，我一般喝 Myprotein 的原味乳清蛋白。", "protein"),
        ("a", "原味的配料简单，相对安全。"),
    ]),
    ("chen_s3", "2024-03-05 22:00", [
        ("u", "女朋友小林 3 月 28 日过生日，想送她一份礼物，预算 1000 元左右。", "gift_plan"),
        ("a", "她平时喜欢什么？香水、首饰还是电子产品？"),
        ("u", "她喜欢看书，也喜欢好闻的东西。", "gift_plan"),
        ("a", "可以考虑 Jo Malone 的英国梨与小苍兰香水，30ml 大概 700 元；或者一台 Kindle Paperwhite。", "gift_rec"),
        ("u", "都不错，我再想想。"),
        ("a", "也可以附一张手写卡片，心意更重要。"),
    ]),
    ("chen_s4", "2024-03-20 21:15", [
        ("u", "最后给小林买了 Kindle Paperwhite，还在里面给她下载了几本东野圭吾的小说。", "gift_final"),
        ("a", "很贴心的礼物！东野圭吾的《解忧杂货店》很适合在生日读。"),
        ("u", "她说她最喜欢的是《白夜行》。", "gift_final"),
        ("a", "那可以顺便推荐《幻夜》，和《白夜行》风格很像。"),
        ("u", "好，我记下来了。"),
    ]),
    ("chen_s5", "2024-04-02 10:00", [
        ("u", "好消息：导师说论文初稿可以推迟到 6 月 10 日交，因为要补一组在 MMBench 上的实验。", "thesis_final"),
        ("a", "多了三周，可以从容很多。MMBench 的评测脚本可以直接用 OpenCompass。"),
        ("u", "GPU 的问题也解决了，学院给我们申请到了 8 张 H800 的机时。", "gpu_final"),
        ("a", "太好了，H800 跑 ablation 会快很多。"),
        ("u", "是的，终于不用排队了。"),
    ]),
    ("chen_s6", "2024-04-14 20:00", [
        ("u", "我准备搬家，从学校宿舍搬到五道口附近租房，一室一厅，月租 4500 元。", "move"),
        ("a", "五道口离学校很近，通勤方便。签合同前记得检查水电燃气和押金条款。"),
        ("u", "房东要押一付三，一次要交 18000 元。", "move"),
        ("a", "押一付三在北京很常见，记得拍照记录房屋原始状况。"),
        ("u", "好，4 月 20 号搬进去。", "move"),
        ("a", "祝搬家顺利！"),
    ]),
    ("chen_s7", "2024-05-03 19:30", [
        ("u", "健身坚持两个多月了，体重从 68 公斤涨到了 71 公斤，主要是增肌。", "gym_progress"),
        ("a", "增肌效果很明显！卧推和深蹲的重量涨了多少？"),
        ("u", "卧推从 40 公斤到了 60 公斤。不过最近论文太忙，改成每周两次了。", "gym_change"),
        ("a", "每周两次也能保持，训练质量比次数更重要。"),
        ("u", "嗯，周二和周六去。", "gym_change"),
    ]),
    ("chen_s8", "2024-05-18 23:40", [
        ("u", "能不能给我一些建议，熬夜写论文怎么保持精力？最近每天写到凌晨两点。"),
        ("a", "尽量固定起床时间，中午小睡 20 分钟；咖啡在下午 3 点后就别喝了。晚上饿了可以吃点燕麦或香蕉。"),
        ("u", "宵夜我常点外卖，上次差点点到花生酱拌面，幸好看了一眼。", "allergy"),
        ("a", "过敏的话点外卖一定备注「花生过敏」，并且随身带着抗过敏药。"),
        ("u", "好的，我会注意。"),
    ]),
], [
    ("chen_thesis", "knowledge-update", "我的论文初稿最晚什么时候交？",
     "6 月 10 日（原定 5 月 20 日）", "2024-05-25 22:00", "thesis_first thesis_final"),
    ("chen_gift", "multi-session", "我最后给女朋友送了什么生日礼物？",
     "Kindle Paperwhite，里面下载了东野圭吾的小说", "2024-05-25 22:00", "gift_plan gift_final"),
    ("chen_gift_rec", "single-session-assistant", "你当时推荐过哪款香水给我女朋友？",
     "Jo Malone 英国梨与小苍兰，30ml 大约 700 元", "2024-05-25 22:00", "gift_rec"),
    ("chen_allergy", "single-session-preference", "推荐一些适合我健身后吃的零食吧。",
     "不含花生的零食（他对花生严重过敏），如原味乳清蛋白、香蕉、燕麦", "2024-05-25 22:00", "allergy protein"),
    ("chen_rent", "single-session-user", "我在五道口租的房子月租多少？", "4500 元，一室一厅", "2024-05-25 22:00", "move"),
    ("chen_gym", "knowledge-update", "我现在每周去几次健身房？", "两次，周二和周六（原来每周三次）", "2024-05-25 22:00", "gym gym_change"),
    ("chen_gpu", "knowledge-update", "我做实验现在用的是什么 GPU？",
     "学院申请的 8 张 H800（之前实验室只有 4 张 A100）", "2024-05-25 22:00", "gpu gpu_final"),
    ("chen_bench", "single-session-user", "我的论文要补哪个评测基准的实验？", "MMBench", "2024-05-25 22:00", "thesis_final"),
    ("chen_book", "single-session-user", "我女朋友最喜欢东野圭吾的哪本书？", "《白夜行》", "2024-05-25 22:00", "gift_final"),
])

USERS["zhao"] = ([
    ("zhao_s1", "2024-07-01 10:20", [
        ("u", "我是广州的自由插画师，10 月份要去东京旅行，想趁这几个月学点日语。", "japanese"),
        ("a", "很好的目标！可以先用 Duolingo 或 MOJi 背五十音，再学基础会话。"),
        ("u", "我的目标是年底考 JLPT N3。", "jlpt_first"),
        ("a", "零基础半年考 N3 有点挑战，每天至少要学一个半小时。建议先打好 N5、N4 的基础。"),
        ("u", "好，我先从五十音开始。"),
        ("a", "加油！五十音一般两周能记熟。"),
    ]),
    ("zhao_s2", "2024-07-08 15:00", [
        ("u", "我的工作主要用 iPad Pro 和 Procreate 画图，排版和交付用 Figma。", "tools"),
        ("a", "这套组合很常见。Procreate 导出 PSD 时记得保留图层，方便客户修改。"),
        ("u", "最近接了一个绘本项目，客户要求 9 月 15 日交 24 张插画。", "project"),
        ("a", "24 张，两个半月，平均每周两到三张。建议先做一张样稿确认风格。"),
        ("u", "嗯，我下周交样稿。"),
        ("a", "好的，按周排好进度会轻松很多。"),
    ]),
    ("zhao_s3", "2024-07-15 21:00", [
        ("u", "我总是拖延，一画就刷手机。你建议我用什么方法提高专注力？"),
        ("a", "推荐试试番茄工作法：25 分钟专注加 5 分钟休息。可以用 Forest 这个 App，专注时种一棵树，刷手机树就会枯死。", "focus_rec"),
        ("u", "听起来挺有意思的，我今天就下载。"),
        ("a", "刚开始可以每天先完成四个番茄钟。"),
        ("u", "另外说一下，我从去年开始吃素了，不吃肉也不吃海鲜，蛋和奶可以。", "diet"),
        ("a", "了解，蛋奶素。去东京的话可以找一下素食拉面店，比如 T's Tantan。", "diet"),
    ]),
    ("zhao_s4", "2024-07-27 18:40", [
        ("u", "我家阳台养了一盆龟背竹，最近叶子发黄，是不是浇水太多了？", "plant"),
        ("a", "很可能是浇水太多或者光照太强。龟背竹喜欢散射光，土干了一半再浇透。"),
        ("u", "我每天都浇一点水。", "plant"),
        ("a", "那就是太频繁了，改成一周一次左右，并且确认花盆底部有排水孔。"),
        ("u", "好的，我改改。"),
    ]),
    ("zhao_s5", "2024-08-10 11:00", [
        ("u", "日语学了一个多月，五十音背熟了，但我觉得年底考 N3 太赶了，决定改成 12 月先考 N4。", "jlpt_final"),
        ("a", "很务实的调整！N4 的词汇量大约 1500，按现在的进度完全来得及。"),
        ("u", "我报了一个线上的 N4 冲刺班，每周二、四晚上上课。", "jlpt_final"),
        ("a", "有课程节奏会更稳定，课后记得复习单词。"),
        ("u", "Forest 真的有用，我这一个月种了 80 多棵树。", "focus_use"),
        ("a", "太棒了！专注力提高了，画图效率应该也上去了。"),
    ]),
    ("zhao_s6", "2024-08-24 20:15", [
        ("u", "我准备搬家，从天河搬到海珠区，新房子带一个朝南的大阳台，月租 3800 元。", "move"),
        ("a", "朝南阳台采光好，龟背竹要放在不直晒的位置。"),
        ("u", "对，9 月 1 号搬。搬家那几天绘本项目要赶工，有点担心。", "move"),
        ("a", "可以提前把搬家前后的几天排成轻任务，比如线稿整理，把上色这种需要大段时间的工作放在搬家之后。"),
        ("u", "好主意。"),
    ]),
    ("zhao_s7", "2024-09-14 22:30", [
        ("u", "绘本的 24 张图终于全部交了，客户很满意，还提前结清了尾款 18000 元。", "project_done"),
        ("a", "恭喜！提前交付还拿到了好评，辛苦了。"),
        ("u", "东京的行程我也定了：10 月 12 日出发，住在浅草，一共 6 天。", "tokyo"),
        ("a", "浅草很有氛围，离浅草寺和晴空塔都近。可以买一张东京地铁 72 小时券。"),
        ("u", "我想去吉卜力美术馆，但是票好难抢。", "tokyo"),
        ("a", "吉卜力美术馆的票每月 10 号上午 10 点（日本时间）开售下个月的，要提前定好闹钟。"),
    ]),
    ("zhao_s8", "2024-09-28 16:00", [
        ("u", "有什么推荐的东京素食餐厅吗？我在浅草附近。"),
        ("a", "浅草附近有 Vegan Ramen UZU 的分店和一家素食寿司店；上野有很多寺庙料理（精进料理）。"),
        ("u", "吉卜力美术馆的票抢到了，10 月 14 日下午两点的！", "ghibli"),
        ("a", "太幸运了！记得带上护照，入场要核对身份。"),
        ("u", "龟背竹按你说的改成一周浇一次水，现在长出新叶子了。", "plant_ok"),
        ("a", "太好了，说明根系恢复了。"),
    ]),
], [
    ("zhao_jlpt", "knowledge-update", "我今年打算考日语几级？", "12 月考 N4（原计划 N3）", "2024-10-05 20:00", "jlpt_first jlpt_final"),
    ("zhao_focus", "single-session-assistant", "你推荐过我用什么 App 来提高专注力？",
     "Forest（配合番茄工作法）", "2024-10-05 20:00", "focus_rec"),
    ("zhao_diet", "single-session-preference", "你建议我在东京吃些什么？",
     "素食（她蛋奶素，不吃肉和海鲜），如素食拉面、精进料理", "2024-10-05 20:00", "diet"),
    ("zhao_tools", "single-session-user", "我画插画主要用什么设备和软件？",
     "iPad Pro 和 Procreate，交付用 Figma", "2024-10-05 20:00", "tools"),
    ("zhao_project", "multi-session", "我的绘本项目要交多少张插画，最后尾款是多少？",
     "24 张，尾款 18000 元", "2024-10-05 20:00", "project project_done"),
    ("zhao_plant", "multi-session", "我的龟背竹叶子发黄的问题后来怎么样了？", "改成一周浇一次水后长出了新叶子", "2024-10-05 20:00", "plant plant_ok"),
    ("zhao_ghibli", "temporal-reasoning", "我抢到的吉卜力美术馆门票是哪天几点的？", "10 月 14 日下午两点", "2024-10-05 20:00", "ghibli"),
    ("zhao_move", "single-session-user", "我搬到了广州哪个区，房租多少？", "海珠区，月租 3800 元", "2024-10-05 20:00", "move"),
    ("zhao_hotel", "single-session-user", "我去东京住在哪个区域，待几天？", "浅草，6 天（10 月 12 日出发）", "2024-10-05 20:00", "tokyo"),
])

USERS["liu"] = ([
    ("liu_s1", "2024-01-08 21:30", [
        ("u", "我和女朋友打算今年 10 月 2 日在深圳办婚礼，预算 15 万元。", "wedding_date_first wedding_budget"),
        ("a", "恭喜！国庆期间的酒店需要提前半年以上预订，最好这个月就开始看场地。"),
        ("u", "想请大概 20 桌，你觉得预算够吗？", "wedding_tables"),
        ("a", "深圳中档酒店每桌 5000 到 6000 元，20 桌就要 10 万以上，再加上婚庆和摄影，15 万会比较紧。"),
        ("u", "嗯，我再和她商量一下。"),
    ]),
    ("liu_s2", "2024-01-15 07:45", [
        ("u", "新年目标：减脂。我现在 82 公斤，身高 178，想在婚礼前减到 75 公斤。", "weight_goal"),
        ("a", "7 公斤、九个月，每月不到一公斤，节奏很健康。饮食上控制精制碳水，每周三到四次有氧加力量。"),
        ("u", "我不喜欢跑步，太无聊了。", "no_running"),
        ("a", "可以试试游泳、动感单车或者跳绳，也能很好地减脂。"),
        ("u", "游泳可以，公司楼下就有游泳馆。", "swim"),
        ("a", "那太方便了，每次游 30 到 40 分钟就很好。"),
    ]),
    ("liu_s3", "2024-01-28 22:00", [
        ("u", "我想买一副降噪耳机，每天坐地铁通勤一个小时。在 Sony WH-1000XM5 和 AirPods Max 之间纠结。", "headphones_plan"),
        ("a", "如果主要是通勤降噪，推荐 Sony WH-1000XM5：降噪更强，重量轻，价格 2000 出头；AirPods Max 更重，价格贵一倍。", "headphones_rec"),
        ("u", "我用的是安卓手机，小米 14。", "phone"),
        ("a", "那更推荐索尼了，它支持 LDAC，和安卓手机搭配音质更好。"),
        ("u", "好，就听你的。"),
    ]),
    ("liu_s4", "2024-02-20 20:10", [
        ("u", "婚礼改期了！国庆的酒店都订满了，我们改到 12 月 28 日，在蛇口的希尔顿。", "wedding_date_final wedding_venue"),
        ("a", "12 月底深圳天气也很舒服，而且是年底，亲友更容易安排时间。"),
        ("u", "桌数也减到 16 桌了，每桌 5800 元。", "wedding_tables_final"),
        ("a", "16 桌约 9.3 万，剩下的预算用于婚庆和摄影会宽松一些。"),
        ("u", "对，这样 15 万基本够了。"),
    ]),
    ("liu_s5", "2024-03-12 21:45", [
        ("u", "最近开始学吉他，想在婚礼上给老婆弹唱一首《小幸运》。", "guitar"),
        ("a", "这个想法太浪漫了！《小幸运》用 C 调的简化版和弦就可以，主要是 C、G、Am、F 四个和弦。"),
        ("u", "我买了一把雅马哈 FG800，1600 元。", "guitar_model"),
        ("a", "FG800 是很好的入门琴，单板面板，音色不错。"),
        ("u", "每天晚上练半小时，手指按得好疼。", "guitar"),
        ("a", "刚开始都会疼，两三周后长出茧就好了。"),
    ]),
    ("liu_s6", "2024-04-18 12:20", [
        ("u", "想开始理财，每月工资到手 2.5 万。你建议我怎么定投？", "invest"),
        ("a", "可以先留 6 个月生活费做应急金，然后每月定投宽基指数基金，比如沪深 300 指数基金，金额控制在收入的 10% 到 20%。"),
        ("u", "那我每月 15 号定投 3000 元沪深 300。", "invest_plan"),
        ("a", "好的，长期坚持，不要因为短期涨跌停止定投。"),
        ("u", "明白。"),
    ]),
    ("liu_s7", "2024-06-02 19:00", [
        ("u", "减脂有效果了，现在 77.5 公斤，游泳每周四次。", "weight_progress"),
        ("a", "太棒了，已经减了 4.5 公斤！离目标 75 公斤很近了。"),
        ("u", "索尼耳机也很好用，地铁里几乎听不到噪音。", "headphones_final"),
        ("a", "通勤体验提升很多吧。"),
        ("u", "另外老婆怀孕了，预产期是明年 1 月。", "baby"),
        ("a", "恭喜恭喜！婚礼在 12 月，时间上要好好安排，别让她太累。"),
    ]),
    ("liu_s8", "2024-07-20 20:30", [
        ("u", "考虑到老婆的身体，定投金额从每月 3000 元减到 2000 元，多留点钱准备生孩子。", "invest_change"),
        ("a", "很合理的调整，生育前后的开销确实要提前准备。"),
        ("u", "婚礼那天的《小幸运》我已经能完整弹下来了！", "guitar_progress"),
        ("a", "太好了，婚礼上一定很感人。"),
        ("u", "希望到时候不要紧张。"),
    ]),
], [
    ("liu_wedding", "knowledge-update", "我的婚礼定在哪一天，在哪里办？",
     "12 月 28 日，深圳蛇口希尔顿（原定 10 月 2 日）", "2024-08-01 21:00", "wedding_date_first wedding_date_final wedding_venue"),
    ("liu_tables", "knowledge-update", "婚宴一共订了多少桌？",
     "16 桌，每桌 5800 元（原计划 20 桌）", "2024-08-01 21:00", "wedding_tables wedding_tables_final"),
    ("liu_headphones", "single-session-assistant", "你之前推荐我买哪副降噪耳机，理由是什么？",
     "Sony WH-1000XM5：降噪强、轻、便宜，支持 LDAC 适合安卓", "2024-08-01 21:00", "headphones_rec headphones_plan"),
    ("liu_weight", "multi-session", "我的减脂目标是多少公斤，现在减到多少了？",
     "目标 75 公斤，现在 77.5 公斤（从 82 公斤开始）", "2024-08-01 21:00", "weight_goal weight_progress"),
    ("liu_exercise", "single-session-preference", "有什么推荐的运动适合我减脂？",
     "游泳等非跑步的有氧（他不喜欢跑步，公司楼下有游泳馆）", "2024-08-01 21:00", "no_running swim"),
    ("liu_guitar", "single-session-user", "我买的吉他是什么型号，多少钱？", "雅马哈 FG800，1600 元", "2024-08-01 21:00", "guitar_model"),
    ("liu_invest", "knowledge-update", "我现在每个月定投多少钱？",
     "2000 元沪深 300（原来 3000 元）", "2024-08-01 21:00", "invest_plan invest_change"),
    ("liu_song", "single-session-user", "我想在婚礼上弹唱哪首歌？", "《小幸运》", "2024-08-01 21:00", "guitar"),
    ("liu_phone", "single-session-user", "我用的是什么手机？", "小米 14（安卓）", "2024-08-01 21:00", "phone"),
])


def _date(text: str) -> str:
    moment = datetime.strptime(text, "%Y-%m-%d %H:%M")
    return moment.strftime("%Y/%m/%d (%a) %H:%M")


def records() -> list[dict]:
    """One LongMemEval record per question: its user's whole history, evidence turns marked."""
    out = []
    for user, (sessions, questions) in USERS.items():
        for question_id, kind, question, answer, asked, labels in questions:
            wanted = set(labels.split())
            bodies, answer_sessions = [], []
            for session_id, _, turns in sessions:
                body = []
                for role, text, *marks in turns:
                    hit = bool(wanted & set(marks[0].split())) if marks else False
                    body.append({"role": {"u": "user", "a": "assistant"}[role], "content": text, "has_answer": hit})
                if any(turn["has_answer"] for turn in body):
                    answer_sessions.append(session_id)
                bodies.append(body)
            found = {label for _, _, turns in sessions for turn in turns for label in " ".join(turn[2:]).split()}
            if missing := wanted - found:
                raise ValueError(f"{question_id}: labels {sorted(missing)} mark no turn of {user}'s history")
            out.append({
                "question_id": question_id, "question_type": kind, "question": question, "answer": answer,
                "question_date": _date(asked), "haystack_dates": [_date(d) for _, d, _ in sessions],
                "haystack_session_ids": [s for s, _, _ in sessions], "haystack_sessions": bodies,
                "answer_session_ids": answer_sessions,
            })  # fmt: skip
    return out


def main() -> None:
    OUT.write_text(json.dumps(records(), ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"{OUT.name}: sha256 {hashlib.sha256(OUT.read_bytes()).hexdigest()}")


if __name__ == "__main__":
    main()
